"""A stand-in for the Kubernetes API server, run as a real process on 127.0.0.1 by the tests and benches:
`python3 -m tests.standin.apiserver --port 0 --ready-file F` (see apiserver.py), driven with
`tests.standin.process.StandIn`."""
