"""Makes the OCR worker's int8 recognition model from the float one that rapidocr_onnxruntime's wheel ships:
onnxruntime's dynamic quantisation of the MatMul weights (int8, per tensor), written into the virtual environment
(sys.prefix/swiftwing-models) where ocr_worker.py --rec-model int8 looks. Run by scripts/ocr-venv.sh with the
environment's python3; needs the onnx package (requirements.txt). Nothing is downloaded.

The shipped model keeps its weights in Constant nodes; the quantiser only quantises initializers, so the constants
become initializers first (the same tensors under the same names: the float graph computes the same)."""

import os
import sys

import onnx
import rapidocr_onnxruntime
from onnxruntime.quantization import QuantType, quantize_dynamic

SOURCE = os.path.join(os.path.dirname(rapidocr_onnxruntime.__file__), "models", "ch_PP-OCRv4_rec_infer.onnx")
TARGET = os.path.join(sys.prefix, "swiftwing-models", "ch_PP-OCRv4_rec_infer.int8.onnx")
# Only MatMul: quantised Conv runs as ConvInteger, which onnxruntime's CPU provider runs slower than float Conv.
QUANTISED_OPERATORS = ["MatMul"]


def constants_as_initializers(model):
    nodes = []
    for node in model.graph.node:
        if node.op_type == "Constant" and len(node.attribute) == 1 and node.attribute[0].name == "value":
            tensor = onnx.TensorProto()
            tensor.CopyFrom(node.attribute[0].t)
            tensor.name = node.output[0]
            model.graph.initializer.append(tensor)
        else:
            nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model


def main():
    os.makedirs(os.path.dirname(TARGET), exist_ok=True)
    prepared = TARGET + ".float.onnx"
    onnx.save(constants_as_initializers(onnx.load(SOURCE)), prepared)
    try:
        quantize_dynamic(prepared, TARGET + ".partial", weight_type=QuantType.QInt8,
                         op_types_to_quantize=QUANTISED_OPERATORS)
        os.replace(TARGET + ".partial", TARGET)
    finally:
        os.remove(prepared)
    print(f"quantize_models: {TARGET} ({os.path.getsize(TARGET) / 1e6:.1f} MB) from {SOURCE}")


if __name__ == "__main__":
    main()
