import torch
import warnings
# 屏蔽无关警告日志
warnings.filterwarnings("ignore")
from transformers import AutoTokenizer
# 模型库导入（二选一，按需开启）
# GPTQ 量化模型启用
from auto_gptq import AutoGPTQForCausalLM
# AWQ 量化模型启用
# from autoawq import AutoAWQForCausalLM


def print_cuda_memory_detail():
    """
    打印CUDA显存详细信息
    功能：统计总显存、已占用显存、缓存显存、剩余显存，定位显存溢出问题
    """
    if not torch.cuda.is_available():
        print("❌ 未检测到CUDA可用设备")
        return
    device = torch.device("cuda:0")
    # 单位转换：Byte -> GB
    total_mem = torch.cuda.get_device_properties(device).total_memory / 1024**3
    alloc_mem = torch.cuda.memory_allocated(device) / 1024**3
    reserve_mem = torch.cuda.memory_reserved(device) / 1024**3
    free_mem = total_mem - alloc_mem
    print("\n" + "=" * 50)
    print(f"【CUDA显存状态】")
    print(f"显卡总显存：{total_mem:.2f}GB")
    print(f"模型已占用显存：{alloc_mem:.2f}GB")
    print(f"框架缓存预留显存：{reserve_mem:.2f}GB")
    print(f"剩余可用显存：{free_mem:.2f}GB")
    print("=" * 50 + "\n")


def check_quant_model_valid(model):
    """
    量化模型有效性校验
    功能：检测是否存在静默FP16回退，识别假量化问题
    """
    quant_layer_num = 0
    normal_linear_num = 0
    # 遍历模型所有网络层
    for name, module in model.named_modules():
        # 匹配AWQ/GPTQ量化层
        quant_flag = "awq" in str(type(module)).lower() or "gptq" in str(type(module)).lower()
        if quant_flag:
            quant_layer_num += 1
        # 统计原生FP16全连接层
        elif "Linear" in str(type(module)):
            normal_linear_num += 1
    # 输出校验结果
    print(f"【量化有效性校验结果】")
    print(f"有效量化层数量：{quant_layer_num}")
    print(f"普通FP16线性层数量：{normal_linear_num}")
    # 风险判定
    if quant_layer_num == 0:
        print("❌ 严重问题：模型未量化生效，静默回退FP16，量化失效！")
    elif normal_linear_num > 0:
        print("⚠️ 部分层未量化，混合精度导致显存压缩效果打折")
    else:
        print("✅ 模型量化完全生效，无FP16回退问题")


def model_oom_diagnose(model_path, model_type="gptq"):
    """
    量化模型OOM一键诊断主函数
    :param model_path: 本地量化模型路径
    :param model_type: 模型类型 gptq / awq
    :return: model, tokenizer
    """
    # 清空显存缓存，避免干扰检测结果
    torch.cuda.empty_cache()
    print("开始加载量化模型并执行OOM排查...")
    # 加载分词器
    tokenizer = AutoTokenizer.from_pretrained(model_path, trust_remote_code=True)
    # 专属量化加载接口，杜绝普通加载导致的FP16回退
    if model_type == "gptq":
        model = AutoGPTQForCausalLM.from_quantized(
            model_path,
            device_map="cuda:0",
            trust_remote_code=True,
            use_safetensors=True
        )
    elif model_type == "awq":
        model = AutoAWQForCausalLM.from_quantized(
            model_path,
            device_map="cuda:0",
            trust_remote_code=True
        )
    else:
        raise ValueError("模型类型仅支持 gptq / awq")
    # 执行显存检测 + 量化校验
    print_cuda_memory_detail()
    check_quant_model_valid(model)
    # OOM场景归因预判
    print("\n【OOM场景预判分析】")
    print("1. 加载阶段显存爆满：权重超标/量化失效回退FP16")
    print("2. 加载正常、推理OOM：KV Cache/激活值/显存碎片导致")
    print("3. 量化层数量为0：版本不兼容，量化完全失效")
    return model, tokenizer


# ===================== 自定义运行参数 =====================
if __name__ == "__main__":
    # 本地量化模型路径
    LOCAL_MODEL_PATH = "./4bit-awq-7b-model"
    # 模型类型切换：awq / gptq
    QUANT_MODEL_TYPE = "awq"
    # 执行一键诊断
    model, tokenizer = model_oom_diagnose(LOCAL_MODEL_PATH, QUANT_MODEL_TYPE)
