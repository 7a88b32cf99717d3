"""What a memory is: its fields, declared once, the records passed between the layers, and a memory as one
line of an export.

    fields   one description of a memory: every field once, with what each layer derives from it
    records  Memory (built from the fields), Hit and StoreSummary, and their JSON shapes
    jsonl    one line of an export (or a synced file), read into checked values
    filter   which memories a search or listing keeps: one value from the operation to SQL and the daemon's mask
    values   values given for declared fields (filters, a save's, an import's), checked by kind
"""
