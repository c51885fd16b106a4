#!/bin/bash
# A traced Python program forks after CUDA started (multiprocessing's fork context): the children
# hold a copy of the tracer without its threads. One child returns (multiprocessing ends it with
# os._exit, which record's sitecustomize makes call the tracer's finish), one is terminated by
# SIGTERM. Neither may hang or write the parent's trace; the parent's trace is complete.
# $1: the tracer library to use (default: the current one).
source "$(dirname "$0")/tracer_env.sh"
[ -n "$1" ] && export KERNSCOPE_TRACER_LIB=$1
cd /tmp
rm -f /tmp/f-*.sqlite
timeout 60 $K record --nvml-interval 0 -o /tmp/f-%p.sqlite -- python3 -c "
import multiprocessing as mp, time, torch
x = torch.ones(1024, device='cuda')
for _ in range(100): x = x * 1.0
torch.cuda.synchronize()
ctx = mp.get_context('fork')
t = time.time(); p = ctx.Process(target=lambda: None); p.start(); p.join()
print(f'returning child: exit {p.exitcode} after {time.time() - t:.2f} s', flush=True)
p = ctx.Process(target=time.sleep, args=(100,)); p.start(); time.sleep(0.5)
t = time.time(); p.terminate(); p.join()
print(f'terminated child: exit {p.exitcode} after {time.time() - t:.2f} s', flush=True)
for _ in range(100): x = x * 1.0
torch.cuda.synchronize()
"
echo "record rc=$? (124: hung)"
for f in /tmp/f-*.sqlite; do echo "$f kernels $(q $f 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') (201+ expected)"; done
