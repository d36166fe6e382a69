"""A test-only plug-in with nothing but a drawing part: a block in the picture's side panel."""
