"""Commands of the hygiene area, registered on the app defined in cli.py."""
