"""The workspace index: scanning, storing, watching and searching files."""
