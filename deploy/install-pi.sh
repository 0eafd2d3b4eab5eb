#!/bin/sh
# The Raspberry Pi install, run by `make install` on a Pi (or `make install-pi`): a venv that
# sees apt's picamera2, with pip's numpy/OpenCV kept on versions that apt's simplejpeg works with.
# Environment: PYTHON, VENV, CONSTRAINTS (deploy/pi-constraints.txt), PI_MODEL_FILE; DRY_RUN=1
# prints the commands instead of running them.
set -eu
PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"
CONSTRAINTS="${CONSTRAINTS:-deploy/pi-constraints.txt}"
PI_MODEL_FILE="${PI_MODEL_FILE:-/proc/device-tree/model}"
PY="$VENV/bin/python"
PIP="$PY -m pip install --quiet --disable-pip-version-check"

say() { echo "install-pi: $*"; }
run() {
    if [ "${DRY_RUN:-}" = 1 ]; then echo "+ $*"; else "$@"; fi
}

model=$(tr -d '\0' < "$PI_MODEL_FILE" 2>/dev/null || echo "unknown machine")
say "$model"
if "$PYTHON" -c 'import picamera2' >/dev/null 2>&1; then
    say "picamera2 from apt: found"
else
    say "picamera2 is not installed for $PYTHON: the Pi camera will not open until you run"
    say "    sudo apt install -y python3-picamera2"
    say "(webcams, video files and stream URLs work without it)"
fi
say "venv $VENV with the system site packages (it sees apt's picamera2 and libcamera)"
run "$PYTHON" -m venv --system-site-packages "$VENV"
say "pip install -e '.[pi,test]' with $CONSTRAINTS (numpy 1.x, OpenCV 4.x)"
run $PIP -c "$CONSTRAINTS" -e '.[pi,test]'
# simplejpeg: apt's one must import with the venv's numpy; if it does not, pip's wheel replaces
# it inside the venv (built against the numpy 2 headers, it runs with numpy 1 and 2).
if [ "${DRY_RUN:-}" = 1 ] || "$PY" -c 'import simplejpeg' >/dev/null 2>&1; then
    say "simplejpeg imports with the venv's numpy: kept"
else
    say "simplejpeg does not import with the venv's numpy: installing pip's into the venv"
    run $PIP --force-reinstall --no-deps simplejpeg
fi
if [ "${DRY_RUN:-}" != 1 ]; then
    "$PY" -c 'import numpy, cv2; print("install-pi: numpy", numpy.__version__, "OpenCV", cv2.__version__)'
    if "$PY" -c 'import picamera2' 2>/dev/null; then
        say "picamera2 imports in the venv: \`$VENV/bin/referee sources\` lists the camera"
    fi
fi
say "done. Next: $VENV/bin/referee sources, then README 'Raspberry Pi'"
