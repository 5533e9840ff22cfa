"""The daemon, `referee run`: the main loop and what only it runs (docs/design.md, "Module
map"). It wires the wings (inputs, outputs, audio) around the rules engine and the store,
and starts the page's process by its command line, never by importing the page."""
