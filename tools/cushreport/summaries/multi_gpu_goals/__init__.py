"""The goals of summaries/multi_gpu.py, one module per kind of comparison:

- common: names (<case>.<g>gpu.<series>...), thresholds by GPU count, what a goal found
- scaling: g GPUs against g x one GPU (advection, lattice-Boltzmann, karst) and FluidX3D
- libraries: matmul against cuBLASXt, the FFT against cufftXt and against its all-to-all floor
- f_tests: cush against raw CUDA, seed 002 eq. 2.2, per case and GPU count
- ops: the GPU<->GPU operations against NCCL and the raw peer copies, and the halo exchange
"""
