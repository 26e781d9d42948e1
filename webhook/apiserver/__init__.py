"""What the API server does to an object before it validates and stores it: defaulting (`defaults.py`) and
dropping the fields of disabled features (`skew.py`, its registry strategies' `dropDisabledFields`). Its
decoding against the structural schema is `webhook/schema/`, its API versions `webhook/convert/`."""
