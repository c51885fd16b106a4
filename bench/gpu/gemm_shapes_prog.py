"""Known bf16 matmuls for bench/gpu/gemm_shapes_check.sh: each (M, N, K) below runs REPS[i] times
as torch.mm of an M x K by a K x N matrix (2*M*N*K FLOPs each), so the FLOPs kernscope derives from
cuBLAS's logs can be checked against the program's own shapes. Prints one 'shape M N K reps' line
per shape and the total."""
import torch

SHAPES = [(64, 4096, 4096), (8, 14336, 4096), (512, 2048, 5632), (1, 32000, 2048), (256, 1024, 512)]
REPS = [1, 2, 3, 4, 5]  # distinct counts: a shape's kernels can be told apart by how often they ran

torch.manual_seed(0)
dev = torch.device("cuda")
mats = [(torch.randn(m, k, device=dev, dtype=torch.bfloat16), torch.randn(k, n, device=dev, dtype=torch.bfloat16))
        for m, n, k in SHAPES]
torch.cuda.synchronize()
total = 0
for (m, n, k), reps, (a, b) in zip(SHAPES, REPS, mats):
    for _ in range(reps):
        torch.mm(a, b)
    total += 2 * m * n * k * reps
    print(f"shape {m} {n} {k} {reps}")
torch.cuda.synchronize()
print(f"total_flops {total}")
