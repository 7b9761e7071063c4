"""The workflow, session and hooks groups: repeatable processes, working sessions and lifecycle hooks."""

from __future__ import annotations

from functools import partial
from typing import Any

from ._schema import (
    AGENT_TYPE,
    DRY_RUN,
    FORMAT,
    LIMIT,
    METADATA,
    SESSION_ID,
    TAGS,
    TASK_ID,
    WORKFLOW_ID,
    ToolDef,
    arr,
    b,
    e,
    i,
    mapping,
    obj,
    ref,
    s,
    tool,
    uri,
)

workflow = partial(tool, "workflow")
session = partial(tool, "session")
hooks = partial(tool, "hooks")

STEP_DEFS: dict[str, Any] = {
    "step": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "agent_type": AGENT_TYPE,
            "action": {"type": "string", "description": "Tool or command the step runs"},
            "inputs": {"type": "object", "additionalProperties": True},
            "depends_on": {"type": "array", "items": {"type": "string"}},
            "retry": {"$ref": "#/$defs/retry"},
        },
        "required": ["name", "action"],
        "additionalProperties": False,
    },
    "retry": {
        "type": "object",
        "properties": {
            "attempts": {"type": "integer", "minimum": 0, "maximum": 10, "default": 2},
            "backoff_seconds": {"type": "number", "minimum": 0, "default": 1},
        },
        "additionalProperties": False,
    },
}
STEPS = arr("Steps of the workflow, run in dependency order", ref("step", "One step"), minItems=1)
EVENT = e(
    "Lifecycle event the hook runs on",
    "pre-task post-task pre-edit post-edit pre-command post-command session-start session-end notify",
)
FILE = s("Path of the file, relative to the workspace", minLength=1)

WORKFLOWS: list[ToolDef] = [
    workflow(
        "workflow_create",
        "Create a reusable workflow from named steps with dependencies, retries and triggers.",
        name=s("Workflow name", minLength=1, maxLength=100),
        steps=STEPS,
        triggers=arr("Events that start the workflow", e("Trigger", "manual push schedule webhook")),
        defs=STEP_DEFS,
        required=("name", "steps"),
    ),
    workflow(
        "workflow_execute",
        "Execute a workflow with input parameters and return the run id.",
        workflow_id=WORKFLOW_ID,
        params=METADATA,
        wait=b("Wait for the run to finish", True),
        required=("workflow_id",),
    ),
    workflow(
        "workflow_status",
        "Status of a workflow run: finished, running and pending steps.",
        run_id=s("Run to inspect", minLength=1),
        required=("run_id",),
    ),
    workflow("workflow_list", "List the defined workflows with their triggers and last run.", tags=TAGS, limit=LIMIT),
    workflow(
        "workflow_export",
        "Export a workflow definition as a document that workflow_import accepts.",
        workflow_id=WORKFLOW_ID,
        format=e("Document format", "json yaml"),
        required=("workflow_id",),
    ),
    workflow(
        "workflow_import",
        "Import a workflow definition from a URL or an inline document.",
        url=uri("Where to fetch the definition"),
        document=s("Inline definition (JSON or YAML)"),
        overwrite=b("Replace a workflow with the same name"),
    ),
    workflow(
        "workflow_delete",
        "Delete a workflow definition and the history of its runs.",
        workflow_id=WORKFLOW_ID,
        required=("workflow_id",),
    ),
    workflow(
        "workflow_template",
        "Create a workflow from a built-in template such as a CI pipeline, code review or release.",
        template=e("Template", "ci_pipeline code_review research release bugfix"),
        name=s("Name for the new workflow"),
        variables=METADATA,
        required=("template",),
    ),
    workflow(
        "workflow_validate",
        "Check a workflow definition for dependency cycles, unknown actions and missing inputs without running it.",
        steps=STEPS,
        defs=STEP_DEFS,
        required=("steps",),
    ),
    workflow(
        "workflow_cancel",
        "Cancel a running workflow; finished steps keep their results.",
        run_id=s("Run to cancel", minLength=1),
        required=("run_id",),
    ),
    workflow(
        "workflow_history",
        "History of a workflow's runs with duration and outcome.",
        workflow_id=WORKFLOW_ID,
        limit=LIMIT,
        required=("workflow_id",),
    ),
    workflow(
        "pipeline_create",
        "Create a CI-style pipeline of stages whose jobs run in parallel inside each stage.",
        name=s("Pipeline name"),
        stages=arr(
            "Stages in order",
            obj("A stage", ("name", "jobs"), name=s("Stage name"), jobs=arr("Jobs of the stage", {"type": "string"})),
        ),
        required=("name", "stages"),
    ),
    workflow(
        "trigger_setup",
        "Configure an event trigger (git push, schedule or webhook) that starts a workflow.",
        workflow_id=WORKFLOW_ID,
        event=e("Event type", "push schedule webhook"),
        cron=s("Cron expression for schedule triggers"),
        url=uri("Webhook URL for webhook triggers"),
        required=("workflow_id", "event"),
    ),
    workflow(
        "scheduler_manage",
        "Manage scheduled jobs: list them, add one or remove one.",
        action=e("What to do", "list add remove"),
        job_id=s("Job to remove"),
        cron=s("Cron expression of a new job"),
        workflow_id=WORKFLOW_ID,
        destructive=True,
    ),
    workflow(
        "batch_process",
        "Apply one operation to a batch of items with a concurrency limit and collect the per-item results.",
        operation=s("Tool or command applied to each item", minLength=1),
        items=arr("Items to process", {"type": "string"}, minItems=1, maxItems=1000),
        concurrency=i("Items processed at once", default=4, minimum=1, maximum=64),
        required=("operation", "items"),
    ),
    workflow(
        "parallel_execute",
        "Run several independent tasks at the same time and gather their results.",
        tasks=arr("Tasks to run", TASK_ID, minItems=1),
        fail_fast=b("Stop all when one fails"),
        required=("tasks",),
    ),
    workflow(
        "sparc_mode",
        "Run one SPARC development phase (specification, pseudocode, architecture, refinement, "
        "completion) on a task description.",
        mode=e("SPARC phase", "specification pseudocode architecture refinement completion"),
        task_description=s("What to build", minLength=1),
        options=METADATA,
        required=("mode", "task_description"),
    ),
    workflow(
        "automation_setup",
        "Set up a rule that runs an action whenever a condition holds.",
        rules=arr("Rules", obj("One rule", ("when", "then"), when=s("Condition expression"), then=s("Action to run"))),
        dry_run=DRY_RUN,
        required=("rules",),
    ),
]

SESSIONS: list[ToolDef] = [
    session(
        "session_start",
        "Start a working session with project context that later calls and agents share.",
        project=s("Project name or path", minLength=1),
        goal=s("What the session is for"),
        tags=TAGS,
        required=("project",),
    ),
    session(
        "session_end",
        "End a session, optionally writing a summary of what was done.",
        session_id=SESSION_ID,
        summarize=b("Write a summary", True),
        required=("session_id",),
    ),
    session(
        "session_restore",
        "Resume a previous session: reload its context, memory references and open tasks.",
        session_id=SESSION_ID,
        required=("session_id",),
        destructive=False,
    ),
    session(
        "session_list",
        "List recent sessions with their project, goal and status.",
        project=s("Only sessions of this project"),
        limit=LIMIT,
    ),
    session(
        "session_save",
        "Save a checkpoint of the current session state that can be restored later.",
        session_id=SESSION_ID,
        label=s("Checkpoint label"),
        required=("session_id",),
    ),
    session(
        "session_export",
        "Export a session's transcript and metadata as a document.",
        session_id=SESSION_ID,
        format=FORMAT,
        include_tool_calls=b("Include tool calls", True),
        required=("session_id",),
    ),
    session(
        "session_info",
        "Details of one session: start time, goal, agents involved and token usage.",
        session_id=SESSION_ID,
        required=("session_id",),
    ),
    session(
        "session_delete",
        "Delete a session with its transcript and checkpoints.",
        session_id=SESSION_ID,
        required=("session_id",),
    ),
    session(
        "session_context_get",
        "Show how full a session's context window is and which items take the most room.",
        session_id=SESSION_ID,
        required=("session_id",),
        read_only=True,
    ),
    session(
        "session_context_compact",
        "Shrink a session's context by summarizing its older turns.",
        session_id=SESSION_ID,
        keep_last=i("Turns kept verbatim", default=10, minimum=0),
        required=("session_id",),
    ),
    session(
        "state_snapshot",
        "Take a snapshot of the whole system state: swarms, agents, tasks and memory references.",
        name=s("Snapshot name"),
        include_memory=b("Include memory values", True),
    ),
    session(
        "session_notes_add",
        "Append a note to a session's log, for decisions and findings worth keeping.",
        session_id=SESSION_ID,
        note=s("Note text", minLength=1, maxLength=4000),
        required=("session_id", "note"),
    ),
    session(
        "session_share",
        "Create a read-only share link for a session that expires after a while.",
        session_id=SESSION_ID,
        expires_hours=i("Hours until the link expires", default=24, minimum=1),
        access=e("Who may open the link", "team public private"),
        required=("session_id",),
    ),
    session(
        "session_fork",
        "Fork a session into a new one to explore an alternative without touching the original.",
        session_id=SESSION_ID,
        name=s("Name of the fork"),
        required=("session_id",),
    ),
    session(
        "session_diff",
        "Compare two sessions: decisions taken, files changed and results.",
        base_session_id=SESSION_ID,
        other_session_id=SESSION_ID,
        required=("base_session_id", "other_session_id"),
    ),
    session(
        "session_timeline",
        "Chronological timeline of a session's events.",
        session_id=SESSION_ID,
        limit=LIMIT,
        required=("session_id",),
    ),
    session(
        "session_tag",
        "Add tags to a session so that it can be found later.",
        session_id=SESSION_ID,
        tags=TAGS,
        required=("session_id", "tags"),
    ),
]

HOOKS: list[ToolDef] = [
    hooks(
        "hooks_pre_task",
        "Run the pre-task hooks: load context from memory, pick agents and prepare the workspace.",
        description=s("The task about to start", minLength=1),
        task_id=TASK_ID,
        auto_spawn=b("Spawn suitable agents automatically", True),
        required=("description",),
    ),
    hooks(
        "hooks_post_task",
        "Run the post-task hooks: store results in memory, update metrics and train patterns.",
        task_id=TASK_ID,
        analyze_performance=b("Record performance data", True),
        required=("task_id",),
    ),
    hooks(
        "hooks_pre_edit",
        "Run before a file edit: check that the path is allowed and back the file up.",
        file=FILE,
        operation=e("Kind of edit", "modify create delete"),
        required=("file",),
    ),
    hooks(
        "hooks_post_edit",
        "Run after a file edit: format, lint and record the change in memory.",
        file=FILE,
        memory_key=s("Memory key to record the change under"),
        format=b("Run the formatter", True),
        required=("file",),
    ),
    hooks(
        "hooks_pre_command",
        "Check a shell command against the safety rules before it runs.",
        command=s("The command line", minLength=1),
        cwd=s("Working directory"),
        required=("command",),
    ),
    hooks(
        "hooks_post_command",
        "Record a shell command's exit status and output summary after it ran.",
        command=s("The command line", minLength=1),
        exit_code=i("Exit status"),
        output=s("Output of the command", maxLength=20000),
        required=("command", "exit_code"),
    ),
    hooks(
        "hooks_session_start",
        "Run the session-start hooks: load the previous session's context and settings.",
        session_id=SESSION_ID,
        load_memory=b("Load memory of the project", True),
    ),
    hooks(
        "hooks_session_end",
        "Run the session-end hooks: summarize, persist state and export metrics.",
        session_id=SESSION_ID,
        export_metrics=b("Export session metrics", True),
    ),
    hooks(
        "hooks_notify",
        "Send a notification through a configured channel such as a chat webhook.",
        message=s("Notification text", minLength=1, maxLength=2000),
        level=e("Severity", "info warning error"),
        webhook=uri("Webhook to post to instead of the default channel"),
        required=("message",),
    ),
    hooks(
        "hooks_list", "List the registered hooks with their event, command and whether they are enabled.", event=EVENT
    ),
    hooks(
        "hooks_register",
        "Register a new hook: a command that runs on a lifecycle event for matching files or tools.",
        event=EVENT,
        command=s("Command to run", minLength=1),
        matcher=s("Glob of files or tools the hook applies to", default="*"),
        timeout=i("Seconds before the hook is stopped", default=30, minimum=1),
        required=("event", "command"),
    ),
    hooks(
        "hooks_unregister",
        "Remove a registered hook so that it no longer runs on its lifecycle event.",
        hook_id=s("Hook to remove", minLength=1),
        required=("hook_id",),
    ),
    hooks(
        "hooks_toggle",
        "Enable or disable a registered hook without removing it.",
        hook_id=s("Hook to change", minLength=1),
        enabled=b("Whether the hook runs"),
        required=("hook_id", "enabled"),
    ),
    hooks(
        "hooks_test",
        "Dry-run a hook against a sample event and show what it would do.",
        hook_id=s("Hook to test", minLength=1),
        sample_event=mapping("Event payload", {}),
        required=("hook_id",),
    ),
    hooks("hooks_logs", "Recent executions of hooks with their duration and exit status.", event=EVENT, limit=LIMIT),
    hooks(
        "hooks_pre_search",
        "Prepare a search: expand the query and look for cached results first.",
        query=s("The search query", minLength=1),
        cache=b("Use cached results", True),
        required=("query",),
    ),
    hooks(
        "hooks_post_search",
        "Store search results in memory for later reuse.",
        query=s("The search query", minLength=1),
        results=arr("Result summaries", {"type": "string"}),
        required=("query", "results"),
    ),
    hooks(
        "hooks_pre_compact",
        "Save the important parts of the context to memory before it is compacted.",
        session_id=SESSION_ID,
        keep=arr("Items that must survive", {"type": "string"}),
    ),
]

TOOLS: list[ToolDef] = WORKFLOWS + SESSIONS + HOOKS
