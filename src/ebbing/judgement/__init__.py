"""Judging two statements: which spans differ (`align`), whether they speak of the same attribute
(`sameness`, a small calibrated model) and what a new statement does to an old one (`judge`: supersedes,
restates or neither). Below both the write path (`ingest`) and ranking (`recall`), which judge alike."""
