# Sourced by the gold scripts on the GPU host: sets NSYS to the nsys binary. Uses $NSYS when it is
# executable; otherwise sources gpu-nsys-env.sh (from /work/shared/tools; copy that folder into the
# git-ignored .gpu/ of the checkout and name .gpu in the device call's carry), or $GPU_NSYS_ENV.
if [ -z "${NSYS:-}" ] || [ ! -x "$NSYS" ]; then
  _gold_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  _gold_env=${GPU_NSYS_ENV:-$_gold_repo/.gpu/tools/gpu-nsys-env.sh}
  if [ ! -f "$_gold_env" ]; then
    echo "gold: no nsys: set NSYS, or copy /work/shared/tools to .gpu/tools (missing $_gold_env)" >&2
    exit 2
  fi
  # It sets its own `here`: keep the caller's.
  _gold_here=${here-}
  # shellcheck disable=SC1090
  source "$_gold_env"
  here=$_gold_here
fi
if [ -z "${NSYS:-}" ] || [ ! -x "$NSYS" ]; then
  echo "gold: nsys not found" >&2
  exit 2
fi
