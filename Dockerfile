# The course image: JupyterLab on the student notebooks, the CUDA 12 stack from PyPI wheels (the
# NVIDIA driver comes from the host: docker run --gpus all, or apptainer run --nv).
# The base is pinned by its date tag (apptainer.def starts from the same one); a site or a test
# without access to it gives another Debian or Ubuntu base with Python 3.11 or 3.12:
#   docker build --build-arg BASE=localhost/debian-base:bookworm -t gs-course .
ARG BASE=ubuntu:noble-20251001
FROM ${BASE}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# libatomic1: Legate links it, and minimal bases lack it.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates libatomic1 \
    && rm -rf /var/lib/apt/lists/*

# The dependencies first, from pyproject.toml alone: a change to the notebooks or to gs_course
# leaves this layer (the CUDA wheels, gigabytes) as it is.
COPY pyproject.toml /opt/gs-course/pyproject.toml
COPY deploy/install.sh /opt/gs-course/deploy/install.sh
RUN /opt/gs-course/deploy/install.sh /opt/gs-course/venv cuda12,lab,test dependencies

COPY . /opt/gs-course
RUN /opt/gs-course/deploy/install.sh /opt/gs-course/venv cuda12,lab,test package \
    && useradd --create-home --uid 1000 student \
    && su student -c "/opt/gs-course/venv/bin/gs-course notebooks /home/student/notebooks"

# A shared GPU: JAX allocates as it goes, Legate gets a fixed share (read at its first import).
ENV PATH=/opt/gs-course/venv/bin:$PATH \
    XLA_PYTHON_CLIENT_PREALLOCATE=false \
    LEGATE_CONFIG="--gpus 1 --cpus 2 --sysmem 2000 --fbmem 4000"

USER 1000:1000
WORKDIR /home/student/notebooks
EXPOSE 8888
CMD ["jupyter", "lab", "--ip=0.0.0.0", "--port=8888", "--no-browser", "--notebook-dir=/home/student/notebooks"]
