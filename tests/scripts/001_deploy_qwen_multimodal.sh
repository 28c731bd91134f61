#!/bin/bash
# deploy_qwen_multimodal.sh
MODEL_PATH="/root/models/Qwen3.5-35B-A3B-AWQ-4bit"
LOG_DIR="/root/workspace/logs"
PORT=8000
# 创建日志目录
mkdir -p $LOG_DIR
# 启动vLLM后端服务
echo "启动vLLM后端服务..."
nohup python -m vllm.entrypoints.openai.api_server \
    --model $MODEL_PATH \
    --tensor-parallel-size 2 \
    --max-model-len 4096 \
    --enforce-eager \ # 必须包含这个参数！
    --port $PORT \
    --served-model-name qwen-multimodal \
    --trust-remote-code \
    > $LOG_DIR/vllm_backend.log 2>&1 &
echo "后端服务已启动，日志：$LOG_DIR/vllm_backend.log"
# 等待后端服务就绪
sleep 30
# 启动前端Web服务
echo "启动前端Web服务..."
cd /root/workspace/web
nohup python app.py --port 7860 \
    --backend-url "http://localhost:$PORT" \
    > $LOG_DIR/web_frontend.log 2>&1 &
echo "前端服务已启动，端口：7860"
echo "部署完成！"
