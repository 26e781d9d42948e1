"""Input: reading manifest files (YAML as kubectl reads it, JSON) into documents with line numbers."""
