"""The swarm, agent, task and coordination groups: who works, on what, and how they agree."""

from __future__ import annotations

from functools import partial

from ._schema import (
    AGENT_ID,
    AGENT_TYPE,
    DRY_RUN,
    LIMIT,
    METADATA,
    PRIORITY,
    SWARM_ID,
    TAGS,
    TASK_ID,
    TIMEFRAME,
    TOPOLOGY,
    ToolDef,
    arr,
    b,
    e,
    i,
    mapping,
    n,
    obj,
    ref,
    s,
    tool,
    uri,
)

swarm = partial(tool, "swarm")
agent = partial(tool, "agent")
task = partial(tool, "task")
coord = partial(tool, "coordination")

RESOURCE_LIMITS = {
    "limits": {
        "type": "object",
        "description": "Resource limits applied to each agent",
        "properties": {
            "max_tokens": {"type": "integer", "minimum": 256, "default": 8192},
            "max_runtime_seconds": {"type": "integer", "minimum": 1, "default": 600},
            "max_parallel_tools": {"type": "integer", "minimum": 1, "maximum": 32, "default": 4},
        },
        "additionalProperties": False,
    }
}
AGENT_IDS = arr("Agents involved", AGENT_ID, minItems=1)

SWARM: list[ToolDef] = [
    swarm("swarm_init", "Initialize a new agent swarm with a topology, a maximum number of agents and a "
          "coordination strategy. Returns the swarm id used by every other swarm tool.",
          topology=TOPOLOGY, max_agents=i("Upper bound on concurrent agents", default=8, minimum=1, maximum=100),
          strategy=e("How work is distributed", "balanced specialized adaptive"),
          limits=ref("limits", "Per-agent resource limits"), defs=RESOURCE_LIMITS, required=("topology",)),
    swarm("swarm_status", "Report the status of a swarm: topology, active and idle agents, queued and running "
          "tasks, and overall health.", swarm_id=SWARM_ID, verbose=b("Include per-agent details")),
    swarm("swarm_monitor", "Watch swarm activity for a number of seconds and return sampled throughput, agent "
          "utilization and events.", swarm_id=SWARM_ID,
          duration=i("Seconds to watch", default=10, minimum=1, maximum=300),
          interval=n("Seconds between samples", default=1, exclusiveMinimum=0), required=("swarm_id",)),
    swarm("swarm_scale", "Scale a swarm up or down to a target number of agents, spawning or retiring agents of "
          "the given type.", swarm_id=SWARM_ID, target_size=i("Desired number of agents", minimum=0, maximum=100),
          agent_type=AGENT_TYPE, required=("swarm_id", "target_size")),
    swarm("swarm_destroy", "Shut a swarm down: terminate all of its agents and drop its queued tasks.",
          swarm_id=SWARM_ID, force=b("Do not wait for running tasks to finish"), required=("swarm_id",)),
    swarm("swarm_list", "List all swarms with their topology, size and status.",
          status=e("Only swarms in this state", "any active paused stopped"), limit=LIMIT),
    swarm("swarm_topology_set", "Change the communication topology of a running swarm without restarting its "
          "agents.", swarm_id=SWARM_ID, topology=TOPOLOGY, required=("swarm_id", "topology")),
    swarm("swarm_config_get", "Get the full configuration of a swarm: limits, strategy, timeouts and retry policy.",
          swarm_id=SWARM_ID, required=("swarm_id",)),
    swarm("swarm_config_update", "Update configuration values of a swarm such as task timeout and retry policy; "
          "unspecified values stay as they are.", swarm_id=SWARM_ID,
          settings=obj("Settings to change", task_timeout=i("Seconds before a task times out", minimum=1),
                       max_retries=i("Retries of a failed task", minimum=0, maximum=10),
                       backoff=e("Retry backoff", "exponential linear none")),
          required=("swarm_id", "settings")),
    swarm("swarm_pause", "Pause all task execution in a swarm while keeping its agents and their memory alive.",
          swarm_id=SWARM_ID, reason=s("Why the swarm is paused, kept in its history"), required=("swarm_id",)),
    swarm("swarm_resume", "Resume a paused swarm so that its agents pick up queued tasks again.",
          swarm_id=SWARM_ID, required=("swarm_id",)),
    swarm("swarm_snapshot", "Capture a snapshot of swarm state (agents, queues, memory references) that "
          "swarm_restore can bring back.", swarm_id=SWARM_ID, label=s("Human-readable label for the snapshot"),
          required=("swarm_id",)),
    swarm("swarm_restore", "Restore a swarm from a snapshot, replacing its current agents and queues.",
          swarm_id=SWARM_ID, snapshot_id=s("Snapshot to restore", minLength=1), required=("swarm_id", "snapshot_id")),
    swarm("swarm_health", "Run health checks on every agent of a swarm and report the ones that are failing or "
          "unresponsive.", swarm_id=SWARM_ID, timeout=n("Seconds to wait for each agent", default=5, minimum=0.1),
          required=("swarm_id",)),
    swarm("swarm_broadcast", "Send one message to every agent of a swarm, for announcements or shared context.",
          swarm_id=SWARM_ID, message=s("Text delivered to each agent", minLength=1, maxLength=4000),
          priority=PRIORITY, required=("swarm_id", "message")),
    swarm("swarm_merge", "Merge one swarm into another, moving its agents and queued tasks over.",
          source_swarm_id=SWARM_ID, target_swarm_id=SWARM_ID, required=("source_swarm_id", "target_swarm_id")),
    swarm("swarm_split", "Split a swarm in two by agent type, moving the chosen agent types into a new swarm.",
          swarm_id=SWARM_ID, agent_types=arr("Agent types that move to the new swarm", AGENT_TYPE, minItems=1),
          required=("swarm_id", "agent_types")),
    swarm("swarm_metrics", "Return throughput, latency percentiles and agent utilization of a swarm over a time "
          "window.", swarm_id=SWARM_ID, timeframe=TIMEFRAME, required=("swarm_id",)),
]

AGENTS: list[ToolDef] = [
    agent("agent_spawn", "Spawn a new agent of a given type (coder, researcher, tester, ...) in a swarm, with "
          "optional extra capabilities and a name.", swarm_id=SWARM_ID, type=AGENT_TYPE,
          name=s("Display name of the agent", maxLength=64),
          capabilities=arr("Extra capabilities, e.g. 'python' or 'security-review'", {"type": "string"}),
          required=("type",)),
    agent("agent_list", "List the agents of a swarm with their type, status and current task.",
          swarm_id=SWARM_ID, filter=e("Only agents in this state", "all active idle busy paused"), limit=LIMIT),
    agent("agent_metrics", "Performance metrics of an agent: tasks completed, success rate, average duration and "
          "tokens used.", agent_id=AGENT_ID, timeframe=TIMEFRAME, required=("agent_id",)),
    agent("agent_terminate", "Terminate an agent. Its unfinished tasks go back to the queue or to another agent.",
          agent_id=AGENT_ID, reassign_to=AGENT_ID, required=("agent_id",)),
    agent("agent_status", "Detailed status of one agent: state, current task, inbox size and last heartbeat.",
          agent_id=AGENT_ID, required=("agent_id",)),
    agent("agent_assign", "Give a specific task to a specific agent, bypassing the automatic scheduler.",
          agent_id=AGENT_ID, task_id=TASK_ID, required=("agent_id", "task_id")),
    agent("agent_message", "Send a direct message to one agent's inbox; the agent reads it before its next task.",
          agent_id=AGENT_ID,
          message=s("Message text", minLength=1, maxLength=4000), sender=s("Who sends it", default="user"),
          required=("agent_id", "message")),
    agent("agent_inbox", "Read the messages waiting in an agent's inbox, oldest first.", agent_id=AGENT_ID,
          limit=LIMIT, mark_read=b("Mark the returned messages as read"), required=("agent_id",), read_only=True),
    agent("agent_capabilities", "Describe what an agent type can do: its skills, default tools and typical "
          "tasks.", type=AGENT_TYPE, required=("type",)),
    agent("agent_configure", "Change an agent's configuration: model, temperature, token budget and allowed "
          "tools.", agent_id=AGENT_ID,
          config=obj("New settings", model=s("Model name"), temperature=n("Sampling temperature", minimum=0,
                                                                           maximum=2),
                     max_tokens=i("Token budget per task", minimum=256),
                     allowed_tools=arr("Tool name patterns the agent may call", {"type": "string"})),
          required=("agent_id", "config")),
    agent("agent_pause", "Pause one agent; it keeps its memory and inbox but takes no new work.",
          agent_id=AGENT_ID, required=("agent_id",)),
    agent("agent_resume", "Resume a paused agent so that it takes work again.", agent_id=AGENT_ID,
          required=("agent_id",)),
    agent("agent_clone", "Clone an agent, with its configuration and optionally its memory, into a new agent.",
          agent_id=AGENT_ID, include_memory=b("Copy the agent's memory too", True), name=s("Name of the clone"),
          required=("agent_id",)),
    agent("agent_logs", "Fetch the most recent log lines written by an agent.", agent_id=AGENT_ID,
          lines=i("Number of lines", default=100, minimum=1, maximum=5000),
          level=e("Minimum level", "info debug warning error"), required=("agent_id",)),
    agent("agent_evaluate", "Score the quality of an agent's recent outputs against a rubric of criteria.",
          agent_id=AGENT_ID, rubric=mapping("Criterion name to weight", {"type": "number", "minimum": 0}),
          sample_size=i("How many recent tasks to score", default=5, minimum=1), required=("agent_id",)),
    agent("agent_rank", "Rank the agents of a swarm by a chosen metric, best first.", swarm_id=SWARM_ID,
          metric=e("Metric to rank by", "success_rate speed cost quality"), limit=LIMIT, required=("swarm_id",)),
    agent("agent_handoff", "Hand an in-progress task and its context from one agent to another.",
          from_agent_id=AGENT_ID, to_agent_id=AGENT_ID, task_id=TASK_ID,
          note=s("Context for the receiving agent"), required=("from_agent_id", "to_agent_id", "task_id")),
    agent("agent_reset", "Reset an agent's memory and state to its defaults, as if it had just been spawned.",
          agent_id=AGENT_ID, keep_config=b("Keep the agent's configuration", True), required=("agent_id",)),
]

TASKS: list[ToolDef] = [
    task("task_orchestrate", "Orchestrate a complex task across the swarm: break it into subtasks, assign them "
         "to suitable agents and track them to completion.", task=s("What needs to be done", minLength=1),
         strategy=e("How subtasks run", "adaptive parallel sequential"), priority=PRIORITY,
         max_agents=i("Agents to use at most", minimum=1, maximum=50),
         dependencies=arr("Tasks that must finish first", TASK_ID), required=("task",)),
    task("task_status", "Progress and state of a task and its subtasks.", task_id=TASK_ID,
         include_subtasks=b("Include each subtask", True), required=("task_id",)),
    task("task_results", "Fetch the results and artifacts of a completed task.", task_id=TASK_ID,
         format=e("Result format", "summary detailed raw"), required=("task_id",)),
    task("task_create", "Create a task with a title, description, priority and dependencies, and put it in the "
         "queue.", title=s("Short title", minLength=1, maxLength=200), description=s("Full description"),
         priority=PRIORITY, dependencies=arr("Tasks that must finish first", TASK_ID), tags=TAGS,
         metadata=METADATA, required=("title",)),
    task("task_list", "List tasks, filtered by status, priority or assignee.",
         status=e("Only tasks in this state", "any queued running completed failed cancelled"),
         priority=PRIORITY, assignee=AGENT_ID, limit=LIMIT),
    task("task_cancel", "Cancel a queued or running task; its partial results are kept.", task_id=TASK_ID,
         reason=s("Why it was cancelled"), required=("task_id",)),
    task("task_retry", "Retry a failed task, optionally on another agent.", task_id=TASK_ID, agent_id=AGENT_ID,
         required=("task_id",)),
    task("task_update", "Update fields of a task such as priority, description or deadline.", task_id=TASK_ID,
         priority=PRIORITY, description=s("New description"),
         deadline=s("New deadline", format="date-time"), required=("task_id",)),
    task("task_delete", "Delete a task together with its results and history.", task_id=TASK_ID,
         required=("task_id",)),
    task("task_dependencies", "Show the dependency graph of a task: what it waits for and what waits for it.",
         task_id=TASK_ID, depth=i("Levels to follow", default=3, minimum=1, maximum=10), required=("task_id",)),
    task("task_decompose", "Break a high-level objective into an ordered list of subtasks with estimated effort, "
         "without creating them.", objective=s("The objective to plan", minLength=1),
         max_subtasks=i("Upper bound on subtasks", default=10, minimum=1, maximum=50), required=("objective",)),
    task("task_prioritize", "Reorder the task queue by a prioritization policy.",
         policy=e("Ordering policy", "wsjf deadline fifo priority"), swarm_id=SWARM_ID, dry_run=DRY_RUN),
    task("task_schedule", "Schedule a task to run at a given time or on a cron expression.", task_id=TASK_ID,
         at=s("When to run once", format="date-time"), cron=s("Cron expression for repeated runs",
                                                               pattern=r"^(\S+\s+){4}\S+$"),
         required=("task_id",)),
    task("task_queue", "Inspect the queue of pending tasks, next to run first.", swarm_id=SWARM_ID, limit=LIMIT),
    task("task_assign", "Assign a task to the best available agent by matching required capabilities.",
         task_id=TASK_ID, capabilities=arr("Capabilities the agent needs", {"type": "string"}),
         required=("task_id",)),
    task("task_comment", "Add a comment to a task's history, visible to the agents working on it.",
         task_id=TASK_ID, comment=s("Comment text", minLength=1, maxLength=4000), required=("task_id", "comment")),
    task("task_history", "Event history of a task: creation, assignments, retries, comments and results.",
         task_id=TASK_ID, limit=LIMIT, required=("task_id",)),
    task("task_estimate", "Estimate the duration and token cost of a task from its description.",
         description=s("What the task is about", minLength=1), agent_type=AGENT_TYPE, required=("description",)),
]

COORDINATION: list[ToolDef] = [
    coord("coordination_sync", "Synchronize shared state and memory between the agents of a swarm so that all "
          "of them see the same facts.", swarm_id=SWARM_ID, scope=e("What to synchronize", "all memory tasks"),
          required=("swarm_id",)),
    coord("load_balance", "Distribute pending tasks across agents using a balancing strategy.",
          swarm_id=SWARM_ID, strategy=e("Balancing strategy", "least_loaded round_robin capability"),
          tasks=arr("Only these tasks; all pending tasks when omitted", TASK_ID), required=("swarm_id",)),
    coord("topology_optimize", "Analyze how agents of a swarm communicate and apply the topology that cuts "
          "message overhead.", swarm_id=SWARM_ID, dry_run=DRY_RUN, required=("swarm_id",)),
    coord("consensus_propose", "Propose a decision that the agents of a swarm vote on, with a quorum and a "
          "deadline.", swarm_id=SWARM_ID, proposal=s("The decision to vote on", minLength=1),
          quorum=n("Share of agents that must vote yes", default=0.5, minimum=0, maximum=1),
          deadline_seconds=i("Voting window", default=60, minimum=1), required=("swarm_id", "proposal")),
    coord("consensus_vote", "Cast an agent's vote (yes, no or abstain) on an open swarm proposal.",
          proposal_id=s("Proposal to vote on"),
          agent_id=AGENT_ID, vote=e("The vote", "yes no abstain"),
          rationale=s("Why the agent votes so"), required=("proposal_id", "agent_id", "vote")),
    coord("consensus_result", "Tally of a proposal's votes and whether it passed.",
          proposal_id=s("Proposal to tally"), required=("proposal_id",)),
    coord("coordination_lock_acquire", "Acquire a named distributed lock for an agent, with a lease that expires "
          "if the agent dies.", name=s("Lock name", pattern="^[a-z0-9:_-]+$"), agent_id=AGENT_ID,
          lease_seconds=i("Lease length", default=30, minimum=1, maximum=3600),
          wait=b("Wait for the lock instead of failing at once"), required=("name", "agent_id")),
    coord("coordination_lock_release", "Release a named distributed lock held by an agent so that others can take it.",
          name=s("Lock name", pattern="^[a-z0-9:_-]+$"), agent_id=AGENT_ID, required=("name", "agent_id")),
    coord("coordination_barrier", "Wait until a given number of agents reach a named barrier, then release them "
          "together.", name=s("Barrier name"), parties=i("Agents to wait for", minimum=2),
          timeout=n("Seconds to wait", default=60, minimum=0.1), required=("name", "parties")),
    coord("coordination_leader_elect", "Elect a leader among the agents of a swarm to coordinate the others.",
          swarm_id=SWARM_ID,
          method=e("Election method", "raft bully random"), candidates=AGENT_IDS, required=("swarm_id",)),
    coord("coordination_channel_create", "Create a publish/subscribe channel for agents to exchange messages "
          "on a topic.", name=s("Channel name", pattern="^[a-z0-9._-]+$"),
          retention=i("Messages kept for late subscribers", default=100, minimum=0), required=("name",)),
    coord("coordination_publish", "Publish a message to a channel; every subscriber receives it.",
          channel=s("Channel name"), payload=METADATA, required=("channel", "payload")),
    coord("coordination_subscribe", "Subscribe an agent to a channel, optionally from the oldest kept message.",
          channel=s("Channel name"), agent_id=AGENT_ID, from_start=b("Replay kept messages"),
          required=("channel", "agent_id")),
    coord("coordination_conflicts", "Detect conflicting changes made by different agents to the same files or "
          "memory keys.", swarm_id=SWARM_ID, paths=arr("Only these paths", {"type": "string"}),
          required=("swarm_id",)),
    coord("coordination_resolve", "Resolve a detected conflict between agents with a strategy.",
          conflict_id=s("Conflict to resolve"), strategy=e("Resolution", "merge ours theirs vote"),
          required=("conflict_id",)),
    coord("coordination_heartbeat", "Record a heartbeat for an agent so that the swarm knows it is alive.",
          agent_id=AGENT_ID, load=n("Current load between 0 and 1", minimum=0, maximum=1),
          required=("agent_id",)),
    coord("coordination_graph", "Return the communication graph of a swarm: which agents talk to which, and how "
          "often.", swarm_id=SWARM_ID, format=e("Graph format", "json dot mermaid"),
          webhook=uri("Also post the graph to this URL"), required=("swarm_id",)),
]

TOOLS: list[ToolDef] = SWARM + AGENTS + TASKS + COORDINATION
