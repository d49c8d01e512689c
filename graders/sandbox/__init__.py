"""The untrusted side: the worker that runs student code, its wire format, the trusted handle on it, and the jail."""
