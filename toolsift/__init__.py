"""toolsift: many MCP servers, one agent, only the tools that matter this turn."""
