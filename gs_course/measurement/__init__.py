"""Measurement: one timer per library (`timer`), result records with their provenance
(`records`), and what the course measures with them: the benchmark, scaling over GPUs, the PCIe
toll and the kinds of host memory. It imports the engine (gs_course's top level), nothing above."""
