"""On the GPU test host: execute solved notebooks at full size and keep them with their outputs.

nbval (`gs-course instructor-check`) compares a notebook's outputs but keeps none; the figures a
notebook prints on the GPU (its timings, what JAX's allocator used) come back this way, as
$OUT/executed/NAME.ipynb with the run's provenance in its metadata: results/h200/executed/NAME.ipynb
(the last run only; git's history keeps the earlier ones).

    GS_COURSE_SIZE=full python3 tools/gpu-host-execute.py solutions/1_Python_GPU_JAX.ipynb ...
"""
import os
import sys
import time
from pathlib import Path

import nbclient
import nbformat
from gs_course.measurement import records


out = Path(os.environ.get("OUT", "gpu-results")) / "executed"
out.mkdir(parents=True, exist_ok=True)
failed = 0
for name in sys.argv[1:]:
    notebook = nbformat.read(name, as_version=4)
    start = time.perf_counter()
    try:
        nbclient.NotebookClient(notebook, timeout=900, kernel_name="python3",
                                resources={"metadata": {"path": str(Path(name).parent)}}).execute()
    except nbclient.exceptions.CellExecutionError as err:
        failed += 1
        print(f"{name}: a cell failed\n{err}")
    notebook.metadata["gpu_host_run"] = {**records.provenance(command=f"tools/gpu-host-execute.py {name}"),
                                         "size": os.environ.get("GS_COURSE_SIZE", "(chosen from the memory free)"),
                                         "seconds": round(time.perf_counter() - start, 1)}
    nbformat.write(notebook, out / Path(name).name)
    print(f"{name}: {time.perf_counter() - start:.0f} s -> {out / Path(name).name}")
sys.exit(1 if failed else 0)
