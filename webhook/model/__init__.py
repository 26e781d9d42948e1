"""Plain data types shared by every layer: field paths, violations, errors."""
