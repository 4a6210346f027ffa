"""On the GPU test host: execute solved notebooks at full size and keep them with their outputs.

nbval (`gs-course instructor-check`) compares a notebook's outputs but keeps none; the figures a
notebook prints on the GPU (its timings, what JAX's allocator used) come back this way, as
$OUT/gpu-NAME.ipynb, to be committed under results/.

    GS_COURSE_SIZE=full python3 tools/gpu-host-execute.py solutions/1_Python_GPU_JAX.ipynb ...
"""
import os
import sys
import time
from pathlib import Path

import nbclient
import nbformat

out = Path(os.environ.get("OUT", "gpu-results"))
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
    notebook.metadata["gpu_host_run"] = {"size": os.environ.get("GS_COURSE_SIZE", "(default)"),
                                         "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                                         "commit": os.environ.get("COMMIT", "unknown"),
                                         "seconds": round(time.perf_counter() - start, 1)}
    nbformat.write(notebook, out / f"gpu-{Path(name).name}")
    print(f"{name}: {time.perf_counter() - start:.0f} s -> {out / ('gpu-' + Path(name).name)}")
sys.exit(1 if failed else 0)
