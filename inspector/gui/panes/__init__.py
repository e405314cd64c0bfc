"""The dockable panes: views over the models, linked through the session."""
