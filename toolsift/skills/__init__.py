"""toolsift.skills."""
