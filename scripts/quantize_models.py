"""Derives the OCR worker's faster copies of the PP-OCR models that rapidocr's wheel ships, written into the virtual
environment (sys.prefix/swiftwing-models) where Sources/swiftwing-recognizer-ocr/ocr_worker.py looks. Run by
scripts/ocr-venv.sh with the environment's python3; needs the onnx package (requirements.txt). Nothing is downloaded.

Every copy computes what the shipped model computes (the same weights, rearranged; outputs equal to ~1e-6):
- the shipped models keep their weights in Constant nodes, which onnxruntime's optimiser and quantiser skip: they
  become initializers (the same tensors under the same names);
- each scalar affine step after a Conv (x * w + b, PP-LCNetV3's learnable affine blocks) is folded into the Conv's
  weights and bias;
- each hard-swish written out as x * Clip(x + 3, 0, 6) / 6 becomes x * HardSigmoid(x), which onnxruntime fuses into
  the Conv before it (a Conv with a HardSwish activation, in its blocked layout);
- each scalar affine step before a Conv: folded into a 1x1 Conv without padding, and otherwise made a 1x1 depthwise
  Conv, so the tensors stay in onnxruntime's blocked layout instead of being reordered before and after.
Written out, these element-wise steps and the reorders around them were ~60 % of PP-OCRv4's recognizer's time. The
PP-OCRv6 models have none of them (their per-channel biases and GELUs onnxruntime fuses itself): only the angle
classifier (18 hard-swishes) gets a fused copy, and the detector is read as shipped.
The recognition model's copy has its MatMul weights quantised (onnxruntime's dynamic quantisation, int8, per tensor):
ocr_worker.py --rec-model int8. On home shelves it reads what the float model reads (same recall and confident
figures), in less memory (Benchmarks/README.md); its time is in its convolutions, which stay float (ConvInteger and
QLinearConv ran slower than float Conv on this CPU).
"""

import os
import sys

# onnxruntime's telemetry client off (it would keep a device id and an event store under ~/.cache): before its import.
os.environ["ORT_DISABLE_TELEMETRY"] = "1"

import numpy as np  # noqa: E402
import onnx
import rapidocr
from onnx import helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

SOURCES = os.path.join(os.path.dirname(rapidocr.__file__), "models")
TARGETS = os.path.join(sys.prefix, "swiftwing-models")
# Shipped model -> derived copy, and whether the copy's MatMul weights are quantised.
DERIVED = [
    ("ch_ppocr_mobile_v2.0_cls_mobile.onnx", "ch_ppocr_mobile_v2.0_cls_mobile.fused.onnx", False),
    ("PP-OCRv6_rec_small.onnx", "PP-OCRv6_rec_small.int8.onnx", True),
]
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


class Graph:
    """The model's nodes with their producers, consumers and initializers, rewritten a pattern at a time."""

    def __init__(self, model):
        self.graph = model.graph
        self.initializers = {tensor.name: tensor for tensor in self.graph.initializer}
        self.outputs = {output.name for output in self.graph.output}

    def value(self, name):
        tensor = self.initializers.get(name)
        return None if tensor is None else numpy_helper.to_array(tensor)

    def add_initializer(self, name, array):
        tensor = numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)
        self.graph.initializer.append(tensor)
        self.initializers[name] = self.graph.initializer[-1]
        return name

    def scalar_operand(self, node):
        """(the scalar, the other input) when one input of a binary node is a one-element initializer."""
        for index in (0, 1):
            array = self.value(node.input[index])
            if array is not None and array.size == 1:
                return float(array.ravel()[0]), node.input[1 - index]
        return None, None

    def consumers(self):
        found = {}
        for node in self.graph.node:
            for name in node.input:
                found.setdefault(name, []).append(node)
        return found

    def producers(self):
        return {name: node for node in self.graph.node for name in node.output}

    def remove(self, doomed):
        kept = [node for node in self.graph.node if id(node) not in doomed]
        del self.graph.node[:]
        self.graph.node.extend(kept)

    def drop_unused_initializers(self):
        used = {name for node in self.graph.node for name in node.input}
        kept = [tensor for tensor in self.graph.initializer if tensor.name in used]
        del self.graph.initializer[:]
        self.graph.initializer.extend(kept)


def attributes(node):
    return {attribute.name: helper.get_attribute_value(attribute) for attribute in node.attribute}


def fold_affine_after_conv(graph):
    """Conv -> Mul(s) [-> Add(t)]: the Conv with weights W * s and bias B * s + t."""
    consumers, doomed, count = graph.consumers(), set(), 0
    for conv in list(graph.graph.node):
        weights = graph.value(conv.input[1]) if conv.op_type == "Conv" else None
        users = consumers.get(conv.output[0], []) if weights is not None else []
        if len(users) != 1 or users[0].op_type != "Mul" or conv.output[0] in graph.outputs:
            continue
        mul = users[0]
        scale, source = graph.scalar_operand(mul)
        if scale is None or source != conv.output[0]:
            continue
        shift, last = 0.0, mul
        following = consumers.get(mul.output[0], [])
        if len(following) == 1 and following[0].op_type == "Add":
            value, source = graph.scalar_operand(following[0])
            if value is not None and source == mul.output[0]:
                shift, last = value, following[0]
        bias = graph.value(conv.input[2]) if len(conv.input) > 2 else np.zeros(weights.shape[0], np.float32)
        new_inputs = [graph.add_initializer(conv.output[0] + ".folded_w", weights * scale),
                      graph.add_initializer(conv.output[0] + ".folded_b", bias * scale + shift)]
        del conv.input[1:]
        conv.input.extend(new_inputs)
        conv.output[0] = last.output[0]
        doomed.update({id(mul), id(last)})
        count += 1
    graph.remove(doomed)
    return count


def hard_swish_as_hard_sigmoid(graph):
    """x * Clip(x + 3, 0, 6) / 6 -> x * HardSigmoid(x) with alpha 1/6 and beta 1/2 (the same function)."""
    consumers, producers, doomed, count = graph.consumers(), graph.producers(), set(), 0
    for div in list(graph.graph.node):
        if div.op_type != "Div" or graph.value(div.input[1]) is None or graph.value(div.input[1]).size != 1 \
                or float(graph.value(div.input[1]).ravel()[0]) != 6.0:
            continue
        mul = producers.get(div.input[0])
        if mul is None or mul.op_type != "Mul" or len(consumers[mul.output[0]]) != 1:
            continue
        clip, source = None, None
        for index in (0, 1):
            candidate = producers.get(mul.input[index])
            if candidate is not None and candidate.op_type == "Clip" and len(candidate.input) == 3:
                clip, source = candidate, mul.input[1 - index]
        if clip is None or len(consumers[clip.output[0]]) != 1:
            continue
        low, high = graph.value(clip.input[1]), graph.value(clip.input[2])
        if low is None or high is None or float(low) != 0.0 or float(high) != 6.0:
            continue
        add = producers.get(clip.input[0])
        if add is None or add.op_type != "Add" or len(consumers[add.output[0]]) != 1:
            continue
        three, added_to = graph.scalar_operand(add)
        if three != 3.0 or added_to != source:
            continue
        gate = helper.make_node("HardSigmoid", [source], [div.output[0] + ".gate"], alpha=1.0 / 6.0, beta=0.5)
        product = helper.make_node("Mul", [source, gate.output[0]], [div.output[0]])
        position = list(graph.graph.node).index(div)
        graph.graph.node.insert(position, product)
        graph.graph.node.insert(position, gate)
        doomed.update({id(add), id(clip), id(mul), id(div)})
        count += 1
    graph.remove(doomed)
    return count


def fold_affine_before_conv(graph):
    """Mul(s) -> Add(t) whose only users are Convs: folded into a 1x1 Conv without padding or groups
    (weights W * s, bias B + t * the sum of W over its inputs); otherwise made a 1x1 depthwise Conv (weight s, bias t)
    in their place, which onnxruntime keeps in its blocked layout."""
    consumers, producers, doomed, folded, replaced = graph.consumers(), graph.producers(), set(), 0, 0
    for add in list(graph.graph.node):
        if add.op_type != "Add":
            continue
        shift, source = graph.scalar_operand(add)
        mul = producers.get(source) if shift is not None else None
        if mul is None or mul.op_type != "Mul" or len(consumers[mul.output[0]]) != 1:
            continue
        scale, source = graph.scalar_operand(mul)
        users = consumers.get(add.output[0], [])
        if scale is None or not users or add.output[0] in graph.outputs or any(
                user.op_type != "Conv" or user.input[0] != add.output[0] or graph.value(user.input[1]) is None
                for user in users):
            continue
        conv = users[0]
        weights = graph.value(conv.input[1])
        settings = attributes(conv)
        plain = (len(users) == 1 and not any(settings.get("pads", [0])) and settings.get("group", 1) == 1
                 and settings.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET"))
        if plain:
            bias = graph.value(conv.input[2]) if len(conv.input) > 2 else np.zeros(weights.shape[0], np.float32)
            new_inputs = [source,
                          graph.add_initializer(conv.output[0] + ".scaled_w", weights * scale),
                          graph.add_initializer(conv.output[0] + ".shifted_b",
                                                bias + shift * weights.reshape(weights.shape[0], -1).sum(axis=1))]
            del conv.input[:]
            conv.input.extend(new_inputs)
            folded += 1
        else:
            channels = weights.shape[1] * settings.get("group", 1)
            affine = helper.make_node(
                "Conv", [source, graph.add_initializer(add.output[0] + ".affine_w", np.full((channels, 1, 1, 1), scale)),
                         graph.add_initializer(add.output[0] + ".affine_b", np.full(channels, shift))],
                [add.output[0]], kernel_shape=[1, 1], group=channels)
            graph.graph.node.insert(list(graph.graph.node).index(add), affine)
            replaced += 1
        doomed.update({id(mul), id(add)})
    graph.remove(doomed)
    return folded, replaced


def fused(model):
    """The model with the rewrites above, and what each changed."""
    model = constants_as_initializers(model)
    graph = Graph(model)
    after = fold_affine_after_conv(graph)
    swishes = hard_swish_as_hard_sigmoid(graph)
    folded, replaced = fold_affine_before_conv(graph)
    graph.drop_unused_initializers()
    onnx.checker.check_model(model)
    return model, (f"{after} affine steps folded into the Conv before, {swishes} hard-swishes, {folded} affine steps "
                   f"folded into the Conv after, {replaced} made 1x1 Convs")


# Apache-2.0 4(b): a modified file says it was changed. Kept in the copy's metadata, beside what the source carries.
MODIFIED_NOTE = ("Modified by SwiftWing's scripts/quantize_models.py from {source} as shipped in rapidocr's wheel "
                 "(PaddleOCR model, Apache-2.0, converted by RapidOCR): {changes}.")


def mark_modified(model, source, changes):
    entry = model.metadata_props.add()
    entry.key = "swiftwing_modified"
    entry.value = MODIFIED_NOTE.format(source=os.path.basename(source), changes=changes)


def derive(source, target, quantised):
    model, summary = fused(onnx.load(source))
    mark_modified(model, source, summary + ("; MatMul weights quantised to int8" if quantised else ""))
    partial = target + ".partial"
    if quantised:
        prepared = target + ".float.onnx"
        onnx.save(model, prepared)
        try:
            quantize_dynamic(prepared, partial, weight_type=QuantType.QInt8, op_types_to_quantize=QUANTISED_OPERATORS)
        finally:
            os.remove(prepared)
    else:
        onnx.save(model, partial)
    os.replace(partial, target)
    print(f"quantize_models: {target} ({os.path.getsize(target) / 1e6:.1f} MB) from {source}: {summary}"
          + ("; MatMul weights int8" if quantised else ""))


def main():
    os.makedirs(TARGETS, exist_ok=True)
    for source, target, quantised in DERIVED:
        derive(os.path.join(SOURCES, source), os.path.join(TARGETS, target), quantised)


if __name__ == "__main__":
    main()
