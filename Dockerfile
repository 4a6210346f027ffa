# The course image: JupyterLab on the student notebooks, the CUDA 12 stack from PyPI wheels (the
# NVIDIA driver comes from the host: docker run --gpus all, or apptainer run --nv).
# The base is pinned by its date tag (apptainer.def starts from the same one; tools/container-test.sh
# builds both from it); a site without access to it gives another Debian or Ubuntu base with
# Python 3.11 or 3.12:
#   docker build --build-arg BASE=debian:bookworm -t gs-course .
ARG BASE=ubuntu:noble-20251001
FROM ${BASE}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# libatomic1: Legate links it, and minimal bases lack it.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates libatomic1 \
    && rm -rf /var/lib/apt/lists/*

# The dependencies first, from pyproject.toml and the tested versions alone: a change to the notebooks
# or to gs_course leaves this layer (the CUDA wheels, gigabytes) as it is.
COPY pyproject.toml /opt/gs-course/pyproject.toml
COPY constraints /opt/gs-course/constraints
COPY deploy/install.sh /opt/gs-course/deploy/install.sh
RUN /opt/gs-course/deploy/install.sh /opt/gs-course/venv cuda12,lab,test dependencies

# Ubuntu's images since 23.04 have a user (ubuntu) with UID 1000: the student takes its place.
COPY . /opt/gs-course
RUN /opt/gs-course/deploy/install.sh /opt/gs-course/venv cuda12,lab,test package \
    && if getent passwd 1000 >/dev/null; then userdel --remove "$(getent passwd 1000 | cut -d: -f1)"; fi \
    && useradd --create-home --uid 1000 student

# JAX allocates as it goes; Legate's share is sized from the GPU memory free when the course starts
# (./course sets LEGATE_CONFIG unless docker run -e gives one). JUPYTER_PATH: the course's Legate
# kernel, which tutorial 2 declares (gs-course instructor-check runs it so).
ENV PATH=/opt/gs-course/venv/bin:$PATH \
    XLA_PYTHON_CLIENT_PREALLOCATE=false \
    GS_COURSE_PYTHON=/opt/gs-course/venv/bin/python \
    GS_COURSE_NOTEBOOKS=/home/student/notebooks \
    JUPYTER_PATH=/opt/gs-course/deploy/jupyter

USER 1000:1000
WORKDIR /home/student
EXPOSE 8888
# ./course lab hands the student notebooks out into GS_COURSE_NOTEBOOKS at every start (a home mounted
# from the host gets them too, and keeps the student's changes), then starts JupyterLab there.
CMD ["/opt/gs-course/course", "lab", "--ip=0.0.0.0", "--port=8888", "--no-browser"]
