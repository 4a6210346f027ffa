#!/usr/bin/env bash
# Build the course's two container recipes for real and run them as a site would, with podman
# (as root, on a Debian machine; no Docker daemon or Apptainer needed), each from its defaults.
# Public registries need not be reachable: the recipes' base, ubuntu:noble-YYYYMMDD (Python 3.12),
# is made here by mmdebstrap from Ubuntu's archive, with the user ubuntu (UID 1000) that Ubuntu's
# own image has, under the name the recipes give, in a podman storage of the test's own.
#
#   tools/container-test.sh          # about 20 to 40 minutes; writes results/cpu-dev/container-test.md
#
# 1. Dockerfile: build (time, size; a second build after touching a notebook, to show the CUDA wheels'
#    layer is reused), then as the image's student user: gs-course doctor, the solved notebooks at
#    small size through nbval, JupyterLab from the image's own command answering with its token on a
#    home mounted from the host (the notebooks handed out into it), and
#    the JupyterHub kernels (gs-course kernels) started inside the image through podman standing in
#    for `apptainer exec`.
# 2. apptainer.def, turned into a Dockerfile by tools/apptainer_as_dockerfile.py: its %post builds it,
#    its %test runs (doctor, nbval), its %runscript starts JupyterLab on a read-only image with the
#    notebooks handed out into the user's home.
# Every container and image it made, and only those, is removed at the end, whatever happened.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
result=${OUT:-$root/results/cpu-dev}/container-test.md
work=$(mktemp -d /tmp/gs-course-containers.XXXXXX)
chmod 755 "$work" # apt's sandbox user reads the Ubuntu keyring from there
docker_image=localhost/gs-course-test:docker
apptainer_image=localhost/gs-course-test:apptainer
base=docker.io/library/$(sed -n 's/^ARG BASE=//p' Dockerfile)
lab=gs-course-test-lab-$$ # the one container run in the background, by name
token=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
port=8888 # the images' own command serves on 8888

for tool in podman runc mmdebstrap curl gpgv; do
  command -v "$tool" >/dev/null || { apt-get update -qq && apt-get install -y -qq podman runc mmdebstrap curl >/dev/null; break; }
done
# What this machine needs of podman: runc (crun refuses hybrid cgroups), cgroupfs, no default ulimits.
printf '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\n' >"$work/containers.conf"
export CONTAINERS_CONF=$work/containers.conf
# A storage of its own under $work: the machine's other images and containers are never touched, and
# everything this run made goes with $work (layers of failed builds included).
podman=(podman --runtime runc --root "$work/storage" --runroot "$work/run")
build=("${podman[@]}" build --format docker --network host)
# pip inside the build trusts what pip trusts here (a machine whose package index needs its own CA).
cert=${PIP_CERT:-$(python3 -m pip config list 2>/dev/null | sed -n "s/^[^=]*[.]cert='\(.*\)'$/\1/p" | head -n 1)}
if [[ -n $cert && -f $cert ]]; then
  printf '[global]\ncert = /etc/ssl/certs/host-ca.crt\n' >"$work/pip.conf"
  build+=(-v "$cert:/etc/ssl/certs/host-ca.crt:ro" -v "$work/pip.conf:/etc/pip.conf:ro")
fi

# No GPU here: where a GPU node's runtime (docker --gpus all, apptainer --nv) would bind the driver's
# libcuda.so.1 into the container, the notebook runs bind the CPU stand-in that ./course fetched for
# this machine (Debian's libcuda1, README: "cuPyNumeric without a GPU") and give Legate CPUs, so that
# the cuPyNumeric tutorial runs too. Without it, that tutorial cannot load cuPyNumeric and fails.
stub=$root/.cache/libcuda1/root/usr/lib/x86_64-linux-gnu/nvidia/current
cpu_driver=() cpu_driver_said=" (no libcuda.so.1 bound: run ./course setup first)"
if [[ -e $stub/libcuda.so.1 ]]; then
  cpu_driver=(-v "$stub:/opt/cpu-libcuda:ro" -e LD_LIBRARY_PATH=/opt/cpu-libcuda)
  cpu_driver_said=" (Debian's libcuda1 bound in for the driver, Legate on the CPU)"
fi

cleanup() {
  "${podman[@]}" rm -f "$lab" >/dev/null 2>&1 || true
  # Its own storage goes with $work: unmount what is still mounted there first.
  awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | xargs -r umount -l 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

report=()
failed=0
say() { printf '%s\n' "$*"; report+=("$*"); }
check() { # check NAME COMMAND...: runs it, keeps its last lines, records pass or FAIL
  local name=$1 start=$SECONDS
  shift
  if "$@" >"$work/step.log" 2>&1; then
    say "- **pass** $name ($((SECONDS - start)) s)"
  else
    failed=1
    say "- **FAIL** $name ($((SECONDS - start)) s)"
    tail -n 20 "$work/step.log" >&2
  fi
  report+=('  ```' "$(tail -n 6 "$work/step.log" | sed 's/^/  /')" '  ```')
}
image_size() { "${podman[@]}" image inspect --format '{{.Size}}' "$1" | awk '{printf "%.2f GB", $1 / 1e9}'; }

wait_for_lab() { # wait_for_lab CONTAINER: JupyterLab answers with the token, refuses without it
  local i
  for i in $(seq 120); do
    if curl -fsS "http://127.0.0.1:$port/api/status?token=$token" >"$work/status.json" 2>/dev/null; then
      echo "answered after ${i} s: $(cat "$work/status.json")"
      local anonymous
      anonymous=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/contents")
      echo "without the token: HTTP $anonymous"
      [[ $anonymous == 403 ]]
      return
    fi
    "${podman[@]}" container exists "$1" || { echo "the container stopped"; "${podman[@]}" logs "$1" | tail -n 20; return 1; }
    sleep 1
  done
  echo "no answer on port $port after 120 s"
  "${podman[@]}" logs "$1" | tail -n 20
  return 1
}

lab_from_the_images_command() { # on a home mounted from the host, which hides the image's own
  mkdir -p "$work/docker-home" && chown 1000:1000 "$work/docker-home"
  "${podman[@]}" run -d --name "$lab" --network host -v "$work/docker-home:/home/student" -e "JUPYTER_TOKEN=$token" "$docker_image"
  wait_for_lab "$lab"
  ls "$work/docker-home/notebooks"
  ls "$work/docker-home/notebooks" | grep -q '1_Python_GPU_JAX.ipynb'
}

# gs-course kernels writes kernel specs whose argv is `apptainer exec --nv --cleanenv IMAGE python -m
# ipykernel_launcher -f CONNECTION`, with the settings as APPTAINERENV_*: this stand-in runs exactly
# that through podman (the connection file's folder mounted, APPTAINERENV_X passed as X).
kernel_through_podman() {
  cat >"$work/apptainer" <<EOF
#!/usr/bin/env bash
set -euo pipefail
[[ \$1 == exec ]] || { echo "stand-in: only exec" >&2; exit 2; }
shift
while [[ \$1 == --* ]]; do shift; done   # --nv, --cleanenv: nothing to do without a GPU
image=\${1#$work/kernels/}; shift # the spec names the file by its absolute path: the podman image's name
connection=\${@: -1}
envs=()
while IFS='=' read -r name value; do envs+=(-e "\${name#APPTAINERENV_}=\$value"); done < <(env | grep '^APPTAINERENV_' || true)
exec ${podman[*]} run --rm --network host --user "\$(id -u):\$(id -g)" -v "\$(dirname "\$connection"):\$(dirname "\$connection")" "\${envs[@]}" "\$image" "\$@"
EOF
  chmod +x "$work/apptainer"
  # The spec names the image file as given; a file named like the podman image lets the stand-in
  # pass that name on to podman.
  mkdir -p "$work/jupyter" "$work/kernels/localhost"
  touch "$work/kernels/$docker_image"
  (cd "$work/kernels" && JUPYTER_DATA_DIR=$work/jupyter "$root/.venv/bin/python" - "$docker_image" "$work/apptainer") <<'PY'
import sys
from jupyter_client.manager import KernelManager
from gs_course.cli import main

image, apptainer = sys.argv[1], sys.argv[2]
assert main(["kernels", "--image", image, "--apptainer", apptainer]) == 0
for name in ("gs-course", "gs-course-legate"):
    manager = KernelManager(kernel_name=name)
    manager.start_kernel()
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=180)
    reply = client.execute_interactive(
        "import os, sys, gs_course; print(sys.executable, os.environ['LEGATE_CONFIG'], os.environ.get('JAX_PLATFORMS'))",
        timeout=120,
        output_hook=lambda msg: print(name, msg["content"].get("text", "").strip()) if msg["msg_type"] == "stream" else None)
    client.stop_channels()
    manager.shutdown_kernel(now=True)
    assert reply["content"]["status"] == "ok", reply["content"]
    print(name, "kernel started in the image and ran a cell")
PY
}

make_base() { # the recipes' default base, from Ubuntu's archive: the image Ubuntu publishes under that name, near enough
  # Ubuntu's archive key, from its keyring package (the file's SHA-256 pinned here).
  local keyring_deb=ubuntu-keyring_2023.11.28.1_all.deb
  curl -fsS -o "$work/$keyring_deb" "http://archive.ubuntu.com/ubuntu/pool/main/u/ubuntu-keyring/$keyring_deb"
  echo "36de43b15853ccae0028e9a767613770c704833f82586f28eb262f0311adb8a8  $work/$keyring_deb" | sha256sum -c
  dpkg -x "$work/$keyring_deb" "$work/keyring"
  mmdebstrap --variant=minbase --include=apt --components=main,universe \
    --keyring="$work/keyring/usr/share/keyrings/ubuntu-archive-keyring.gpg" \
    noble "$work/base.tar" http://archive.ubuntu.com/ubuntu
  "${podman[@]}" import "$work/base.tar" localhost/gs-course-test-bare:noble
  rm -f "$work/base.tar"
  mkdir -p "$work/base"
  # As Ubuntu's image has them: PATH in its configuration (a bare import has none), the user ubuntu.
  printf '%s\n' 'FROM localhost/gs-course-test-bare:noble' \
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    'RUN useradd --create-home --uid 1000 ubuntu' 'CMD ["/bin/bash"]' >"$work/base/Dockerfile"
  "${podman[@]}" build --network host -t "$base" "$work/base"
}

say "# The container images, built and run with podman"
say ""
say "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!results' || echo ' (with uncommitted changes)')"
say "- machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB, $(. /etc/os-release && echo "$PRETTY_NAME"), $(podman --version), runc; no GPU"
say "- base: the recipes' default, $base (Python 3.12), made by \`mmdebstrap --variant=minbase\` from Ubuntu's archive with a user ubuntu of UID 1000, as Ubuntu's image has"
say "- command: tools/container-test.sh"
say ""

start=$SECONDS
say "## Dockerfile"
check "the recipes' default base made" make_base
say "- base made in $((SECONDS - start)) s"

start=$SECONDS
check "docker build" "${build[@]}" -t "$docker_image" .
say "- built in $((SECONDS - start)) s; image $(image_size "$docker_image" 2>/dev/null)"
# A notebook changes: the dependencies' layer (the CUDA wheels) must come from the cache.
cp notebooks/README.md "$work/README.md.orig"
echo "" >>notebooks/README.md
start=$SECONDS
"${build[@]}" -t "$docker_image" . >"$work/rebuild.log" 2>&1 || failed=1
cp "$work/README.md.orig" notebooks/README.md
cached=$(grep -A1 'install.sh /opt/gs-course/venv cuda12,lab,test dependencies' "$work/rebuild.log" | grep -c 'Using cache' || true)
say "- rebuilt after a notebook changed in $((SECONDS - start)) s; the dependencies' layer $([[ $cached -ge 1 ]] && echo 'came from the cache' || echo 'was REBUILT')"
[[ $cached -ge 1 ]] || failed=1

built() { "${podman[@]}" image exists "$1" || { say "- **not run**: the image was not built"; return 1; }; }
if built "$docker_image"; then
check "gs-course doctor as the student user" "${podman[@]}" run --rm "$docker_image" bash -c 'id -un && gs-course doctor'
check "the solved notebooks at small size through nbval, as the student user$cpu_driver_said" \
  "${podman[@]}" run --rm "${cpu_driver[@]}" -e GS_COURSE_SIZE=small -w /opt/gs-course "$docker_image" \
  python -m pytest -q -p no:cacheprovider solutions
check "JupyterLab from the image's own command, on port $port, with its token, notebooks handed out into a mounted home" lab_from_the_images_command
"${podman[@]}" rm -f "$lab" >/dev/null 2>&1 || true
check "the JupyterHub kernels (gs-course kernels) started in the image through podman as apptainer exec" kernel_through_podman
fi

say ""
say "## apptainer.def (through tools/apptainer_as_dockerfile.py)"
python3 tools/apptainer_as_dockerfile.py apptainer.def >"$work/Dockerfile.apptainer"
start=$SECONDS
check "build: %files and %post" "${build[@]}" -f "$work/Dockerfile.apptainer" -t "$apptainer_image" .
say "- built in $((SECONDS - start)) s; image $(image_size "$apptainer_image" 2>/dev/null)"
if built "$apptainer_image"; then
mkdir -p "$work/home" && chown 1000:1000 "$work/home"
as_user=(--user 1000:1000 -v "$work/home:/home/student" -e HOME=/home/student --read-only)
check "%test (gs-course doctor, then the solved notebooks at small size), read-only image$cpu_driver_said" \
  "${podman[@]}" run --rm "${as_user[@]}" "${cpu_driver[@]}" --entrypoint /.singularity.d/actions/exec "$apptainer_image" /bin/sh -e /.singularity.d/test
lab_from_the_runscript() {
  "${podman[@]}" run -d --name "$lab" --network host "${as_user[@]}" -e "JUPYTER_TOKEN=$token" "$apptainer_image"
  wait_for_lab "$lab"
  ls "$work/home/gs-course-notebooks"
  ls "$work/home/gs-course-notebooks" | grep -q '1_Python_GPU_JAX.ipynb'
}
check "%runscript: notebooks handed out into \$HOME, JupyterLab on port $port with its token, read-only image" lab_from_the_runscript
"${podman[@]}" rm -f "$lab" >/dev/null 2>&1 || true
fi

say ""
say "Not shown here (no Apptainer, no GPU): \`--nv\`, Apptainer's own --cleanenv and APPTAINERENV_* handling, a GPU inside either image."
mkdir -p "$(dirname "$result")"
printf '%s\n' "${report[@]}" >"$result"
echo "wrote $result"
exit "$failed"
