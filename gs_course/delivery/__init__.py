"""Getting the course to people: the doctor, the instructor's check and the classroom rehearsal,
the handout of the notebooks, the Jupyter kernels, the `gs-course run` command, and the documents
whose figures are rendered from records. It imports everything below it; only `gs_course.cli`
imports it."""
