"""Framework adapters: toolsift's scoped, permission-checked tools as each framework's own tool objects.

Each adapter lives in its own module and needs its framework (an extra):

- ``toolsift.agent.adapters.pydantic_ai.ToolsiftToolset`` (the ``pydantic-ai`` extra)
- ``toolsift.agent.adapters.openai_agents.ToolsiftAgentsServer`` (the ``openai-agents`` extra)
- ``toolsift.agent.adapters.langchain.LangChainTools`` (the ``langchain`` extra)

All three follow the conversation turn by turn (``/use`` reaches the
framework's model at its next step) and send every call through the five
layers and the audit log, a refusal coming back as a tool error.
"""

# Nothing here is public: users import the adapter they need from its own module.
__all__: list[str] = []
