"""toolsift.agent."""
