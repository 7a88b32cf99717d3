"""Commands of the daemon area, registered on the app defined in cli.py."""
