"""Views as data for the CLI and the GUI: search, timeline, graph, scratchpad, salience."""
