# 安装vLLM（确保CUDA版本匹配）
pip install vllm==0.6.3.post1
# 启动服务（自动启用PagedAttention + AWQ）
python -m vllm.entrypoints.api_server \
    --model /models/Qwen3-4B-Instruct-awq \
    --dtype half \
    --quantization awq \
    --tensor-parallel-size 1 \
    --max-model-len 262144 \
    --gpu-memory-utilization 0.95 \
    --host 0.0.0.0 \
    --port 8000 \
    --enable-flash-attn False
