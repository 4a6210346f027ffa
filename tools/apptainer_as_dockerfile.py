"""An Apptainer definition as a Dockerfile that behaves as Apptainer would run it, so that a machine
with podman but no Apptainer builds and runs `apptainer.def` itself: its %files, its %post (as
/bin/sh -e, as Apptainer runs it), its %environment (sourced before every command, as `apptainer
exec` does), its %runscript and %test (as the files Apptainer keeps under /.singularity.d/).

    python3 tools/apptainer_as_dockerfile.py apptainer.def > Dockerfile.apptainer

What this cannot show, and only a site with Apptainer can: `--nv` (the host's driver bound in),
the read-only image, and Apptainer's own environment handling (--cleanenv, APPTAINERENV_*).
(spython's converter was tried first: it writes the %runscript through `echo` with its quotes
lost, so `$HOME` was expanded at build time, as root.)
"""

from __future__ import annotations

import base64
import json
import re
import sys
from pathlib import Path

#: Runs a command as `apptainer exec` would: the definition's environment first.
EXEC = "/.singularity.d/actions/exec"


def sections(definition: str) -> tuple[dict[str, str], dict[str, str]]:
    """(header keys, %section -> body) of an Apptainer definition file."""
    header_text, *parts = re.split(r"^%(\w+)[ \t]*$", definition, flags=re.M)
    header = dict(line.split(":", 1) for line in header_text.strip().splitlines() if line.strip())
    header = {k.strip(): v.strip() for k, v in header.items()}
    return header, {name: body.strip() for name, body in zip(parts[::2], parts[1::2])}


def _write(path: str, text: str) -> str:
    """A RUN line that writes `text` to `path` byte for byte (base64: no quoting to get wrong, and
    no heredoc, which podman 4.3's builder does not know)."""
    encoded = base64.b64encode((text + "\n").encode()).decode()
    return f"RUN mkdir -p {Path(path).parent} && echo {encoded} | base64 -d > {path}"


def dockerfile(definition: str) -> str:
    header, body = sections(definition)
    if header.get("Bootstrap") != "docker":
        raise SystemExit(f"only 'Bootstrap: docker' definitions are converted, not {header.get('Bootstrap')!r}")
    lines = [f"ARG BASE={header['From']}", "FROM ${BASE}"]
    for entry in body.get("files", "").splitlines():
        source, destination = entry.split()
        lines.append(f"COPY {source} {destination}")
    lines.append(_write("/.singularity.d/post.sh", body.get("post", "")))
    lines.append("RUN /bin/sh -e /.singularity.d/post.sh")
    lines.append(_write("/.singularity.d/env/90-environment.sh", body.get("environment", "")))
    lines.append(_write(EXEC, '#!/bin/sh\n. /.singularity.d/env/90-environment.sh\nexec "$@"'))
    lines.append(_write("/.singularity.d/runscript", "#!/bin/sh\n" + body.get("runscript", "")))
    lines.append(_write("/.singularity.d/test", "#!/bin/sh -e\n" + body.get("test", "")))
    lines.append(f"RUN chmod 755 {EXEC} /.singularity.d/runscript /.singularity.d/test")
    # `apptainer run IMAGE ARGS` runs the runscript with ARGS, in the definition's environment.
    lines.append(f"ENTRYPOINT {json.dumps([EXEC, '/.singularity.d/runscript'])}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(dockerfile(Path(sys.argv[1]).read_text()))
