"""What a memory is: its fields, declared once, and the records passed between the layers.

    fields   one description of a memory: every field once, with what each layer derives from it
    records  Memory (built from the fields), Hit and StoreSummary, and their JSON shapes
"""
