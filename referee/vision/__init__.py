"""The camera's eyes: SET cards found and read in a frame or a photo (OpenCV and numpy,
the `camera` extra). See docs/design.md, "The camera's eyes"."""
