"""`draguard audit`: every stored DRA object and every Pod pending on DRA grounds, judged by the rules and
policies in force as the webhook would judge an UPDATE that changes nothing (ratcheting), with results in
text, JSON or `wgpolicyk8s.io/v1alpha2` PolicyReports (docs/audit.md)."""
