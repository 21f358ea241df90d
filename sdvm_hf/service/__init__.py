"""The SDVM round trip: samples through sdvm-audit-1 / sdvm-fix-1 and back, resumable."""
