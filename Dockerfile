# The course image: JupyterLab on the student notebooks, the CUDA 12 stack from PyPI wheels (the
# NVIDIA driver comes from the host: docker run --gpus all, or apptainer run --nv).
# The base is pinned by its date tag; apptainer.def starts from the same one.
FROM ubuntu:noble-20251001

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/*

COPY . /opt/gs-course
RUN /opt/gs-course/deploy/install.sh /opt/gs-course/venv cuda12,lab,test \
    && useradd --create-home --uid 1000 student \
    && cp -r /opt/gs-course/notebooks /home/student/notebooks \
    && chown -R student:student /home/student/notebooks

# A shared GPU: JAX allocates as it goes, Legate gets a fixed share (read at its first import).
ENV PATH=/opt/gs-course/venv/bin:$PATH \
    XLA_PYTHON_CLIENT_PREALLOCATE=false \
    LEGATE_CONFIG="--gpus 1 --cpus 2 --sysmem 2000 --fbmem 4000"

USER 1000:1000
WORKDIR /home/student/notebooks
EXPOSE 8888
CMD ["jupyter", "lab", "--ip=0.0.0.0", "--port=8888", "--no-browser", "--notebook-dir=/home/student/notebooks"]
