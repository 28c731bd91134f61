#!/bin/bash
# Report 000 ("Qwen 3.6 awq cant load, always OOM error"): the launch its text describes,
# written as the user would have run it. Section 一 loads Qwen 3.6's AWQ 4-bit checkpoint
# with vLLM; section 五's example (suggest_awq_load(tp_size=2, max_model_len=8192,
# gpu_gb=40)) gives two 40 GB cards, --tensor-parallel-size 2 and --max-model-len 8192.
MODEL_PATH=/models/Qwen3.6-35B-A3B-AWQ
CUDA_VISIBLE_DEVICES=0,1 vllm serve $MODEL_PATH \
    --tensor-parallel-size 2 \
    --max-model-len 8192
