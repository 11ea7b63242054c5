"""Version-independent runtime shared by every generated revision package."""
