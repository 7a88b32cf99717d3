"""Commands of the git area, registered on the app defined in cli.py."""
