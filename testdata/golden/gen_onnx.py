#!/usr/bin/env python3
"""Exports the ONNX test models of package onnx with Debian's PyTorch 1.13
and torchvision 0.14, and PyTorch's outputs for seeded random inputs.

Writes testdata/onnx/<model>.onnx, <model>.input.npy and <model>.output.npy
(each model has one input named "input" and one output named "output").
Weights are randomly initialised (seeded) and the models are in eval mode.
With --full it also writes the full-size ResNet-18 and MobileNetV2 to
testdata/onnx/full/ (not committed; the tests run them when present).
Model names as arguments (mlp, resnet18, mobilenetv2, transformer, unet,
ops19, conv3d, convtranspose, resize13, resize17)
export only those.
"""
import os
import sys

import numpy as np
import torch
from torch import nn
from torchvision.models import mobilenet_v2
from torchvision.models.resnet import BasicBlock, resnet18

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "onnx")


class SmallResNet18(nn.Module):
    """torchvision's ResNet(BasicBlock, [2, 2, 2, 2]) with every width divided
    by 64/base: the same topology (7×7 stem, max-pool, four stages of two
    BasicBlocks with 1×1 strided downsampling, global pool, fc), built from
    torchvision's own BasicBlock."""

    def __init__(self, base=16, num_classes=10):
        super().__init__()
        self.inplanes = base
        self.conv1 = nn.Conv2d(3, base, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(base)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._layer(base, 1)
        self.layer2 = self._layer(base * 2, 2)
        self.layer3 = self._layer(base * 4, 2)
        self.layer4 = self._layer(base * 8, 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(base * 8, num_classes)

    def _layer(self, planes, stride):
        down = None
        if stride != 1 or self.inplanes != planes:
            down = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))
        blocks = [BasicBlock(self.inplanes, planes, stride, down), BasicBlock(planes, planes)]
        self.inplanes = planes
        return nn.Sequential(*blocks)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class Encoder(nn.Module):
    """Token embedding plus learned positions into a 2-layer batch-first
    nn.TransformerEncoder (GELU, so the graph has Erf) and a linear head."""

    def __init__(self, vocab=50, d=32, heads=4, ff=64, seq=12, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, seq, d) * 0.1)
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.1, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(d, classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[:, : tokens.shape[1]]
        return self.head(self.encoder(x))


class SmallUNet(nn.Module):
    """A U-Net-shaped network for the ops PyTorch exports for segmentation
    and detection heads: HardSwish, LeakyReLU, Softplus, Hardsigmoid,
    nn.Upsample (nearest), F.interpolate (bilinear, half-pixel and
    align_corners, by scale and by size), torch.chunk (Split), torch.flip
    (Slice with a negative step), Tensor.repeat (Tile) and torch.maximum."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, padding=1)
        self.down = nn.Conv2d(8, 16, 3, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.dec = nn.Conv2d(24, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        e = nn.functional.hardswish(self.enc(x))
        d = nn.functional.leaky_relu(self.down(nn.functional.max_pool2d(e, 2)), 0.1)
        y = nn.functional.softplus(self.dec(torch.cat([self.up(d), e], 1)))
        y = nn.functional.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
        y = nn.functional.interpolate(y, size=(30, 26), mode="bilinear", align_corners=True)
        a, b = torch.chunk(y, 2, dim=1)
        y = torch.maximum(a, torch.flip(b, [3])).repeat(1, 2, 1, 1)
        return nn.functional.hardsigmoid(self.head(y))


class Issue19Ops(nn.Module):
    """torch.topk, cumsum, einsum, triu/tril, flip and argmin (issue 19), as
    the exporter writes them: TopK, CumSum, Einsum, Trilu, Slice with
    negative steps and ArgMin. Odd sizes; the transposed TopK and CumSum read strided
    views; TopK's Int64 indices come out cast to float."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(7, 3))

    def forward(self, x):  # x: [batch, 5, 7]
        top, idx = torch.topk(x, 3, dim=-1)
        low, low_idx = torch.topk(x.transpose(1, 2), 2, dim=-1, largest=False)
        run = torch.cumsum(x.transpose(1, 2), dim=2)
        back = torch.flip(torch.cumsum(torch.flip(x, [1]), dim=1), [1])
        gram = torch.einsum("bij,bkj->bik", x, x)
        proj = torch.einsum("bij,jk->bik", x, self.w)
        tri = torch.triu(gram, 1) - 2 * torch.tril(gram, -2)
        flipped = torch.flip(x, [1, 2])
        first_min = torch.argmin(x, dim=1).float()
        parts = [top, idx.float(), low, low_idx.float(), run, back, gram, proj, tri, flipped, first_min]
        return torch.cat([p.flatten(1) for p in parts], 1)


class ResizeModes(nn.Module):
    """Every Resize that torch 1.13 exports for nn.Upsample and
    F.interpolate in nearest and linear modes (issue 18), on 1-D, 2-D and
    3-D spatial axes, by scale (integer and fractional) and by size (up
    and down, odd sizes), half-pixel and align_corners: nearest becomes
    asymmetric/floor, linear half_pixel (pytorch_half_pixel at opset 11 and
    below) or align_corners. The input [batch, 4, 6, 5, 7] is read as a
    volume, as images (depth folded into channels) and as signals."""

    def forward(self, x):  # x: [batch, 4, 6, 5, 7]
        f = nn.functional.interpolate
        b = x.shape[0]
        img = x.reshape(b, 24, 5, 7)
        sig = x.reshape(b, 120, 7)
        parts = [
            f(sig, scale_factor=3, mode="nearest"),
            f(sig, size=11, mode="nearest"),
            f(sig, size=4, mode="linear", align_corners=False),
            f(sig, scale_factor=2.5, mode="linear", align_corners=False),
            f(sig, size=13, mode="linear", align_corners=True),
            nn.Upsample(scale_factor=2, mode="nearest")(img),
            f(img, size=(3, 9), mode="nearest"),
            f(img, scale_factor=(1.5, 2), mode="bilinear", align_corners=False),
            f(img, size=(9, 4), mode="bilinear", align_corners=False),
            f(img, size=(8, 13), mode="bilinear", align_corners=True),
            f(x, scale_factor=2, mode="nearest"),
            f(x, size=(4, 7, 3), mode="nearest"),
            f(x, scale_factor=(0.5, 2, 1.5), mode="trilinear", align_corners=False),
            f(x, size=(5, 9, 10), mode="trilinear", align_corners=True),
        ]
        return torch.cat([p.flatten(1) for p in parts], 1)


class SmallConv3d(nn.Module):
    """nn.Conv3d as the exporter writes it (Conv with three spatial axes):
    a padded 3×3×3 convolution with bias, ReLU, then a strided, grouped,
    depth-dilated one with an uneven kernel, on an odd-sized volume."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv3d(3, 4, 3, padding=1)
        self.b = nn.Conv3d(4, 6, (3, 2, 3), stride=2, padding=(1, 0, 1), dilation=(2, 1, 1), groups=2)

    def forward(self, x):  # x: [batch, 3, 7, 9, 8]
        return self.b(torch.relu(self.a(x)))


class SmallConvTranspose(nn.Module):
    """nn.ConvTranspose1d/2d as the exporter writes them (ConvTranspose,
    issue 18): strided with output padding and bias, a grouped, dilated one
    with an uneven kernel and pads, a stride-1 one, and a 1-D one with
    output padding, on odd sizes."""

    def __init__(self):
        super().__init__()
        self.a = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
        self.b = nn.ConvTranspose2d(6, 4, (2, 3), stride=(1, 2), padding=(0, 1), dilation=(2, 1), groups=2, bias=False)
        self.c = nn.ConvTranspose2d(4, 3, 3, padding=1)
        self.d = nn.ConvTranspose1d(4, 5, 4, stride=3, padding=2, output_padding=2)

    def forward(self, x):  # x: [batch, 4, 5, 7]
        y = self.b(torch.relu(self.a(x)))
        parts = [y, self.c(x), self.d(x.flatten(2))]
        return torch.cat([p.flatten(1) for p in parts], 1)


def randomize_bn(model, gen):
    # Fresh BatchNorm statistics are 0 and 1, which would hide a wrong fold.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=gen) * 0.1)


def export(name, model, x, opset, folder=OUT):
    model.eval()
    with torch.no_grad():
        randomize_bn(model, torch.Generator().manual_seed(7))
    path = os.path.join(folder, name + ".onnx")
    torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, opset_version=opset)
    with torch.no_grad():
        y = model(x)
    np.save(os.path.join(folder, name + ".input.npy"), x.numpy())
    np.save(os.path.join(folder, name + ".output.npy"), y.numpy().astype(np.float32))
    print(f"{path}: {os.path.getsize(path)} bytes, input {tuple(x.shape)}, output {tuple(y.shape)}")


def main():
    os.makedirs(OUT, exist_ok=True)
    # Model names as arguments export only those (the others' files stay).
    only = [a for a in sys.argv[1:] if not a.startswith("--")]

    def want(name):
        return not only or name in only
    if want("resnet18"):
        torch.manual_seed(0)
        export("resnet18", SmallResNet18(), torch.randn(2, 3, 40, 40), 13)
    if want("mobilenetv2"):
        torch.manual_seed(1)
        export("mobilenetv2", mobilenet_v2(width_mult=0.25, num_classes=10), torch.randn(2, 3, 40, 40), 15)
    if want("transformer"):
        torch.manual_seed(2)
        export("transformer", Encoder(), torch.randint(0, 50, (3, 12)), 17)
    if want("mlp"):
        torch.manual_seed(3)
        mlp = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 7))
        export("mlp", mlp, torch.randn(5, 20), 14)
    if want("unet"):
        torch.manual_seed(6)
        export("unet", SmallUNet(), torch.randn(2, 3, 16, 16), 17)
    if want("ops19"):
        torch.manual_seed(8)
        export("ops19", Issue19Ops(), torch.randn(3, 5, 7), 17)
    if want("convtranspose"):
        torch.manual_seed(11)
        export("convtranspose", SmallConvTranspose(), torch.randn(2, 4, 5, 7), 17)
    if want("conv3d"):
        torch.manual_seed(10)
        export("conv3d", SmallConv3d(), torch.randn(2, 3, 7, 9, 8), 17)
    for opset in (13, 17):
        if want(f"resize{opset}"):
            torch.manual_seed(9)
            export(f"resize{opset}", ResizeModes(), torch.randn(2, 4, 6, 5, 7), opset)
    if "--full" in sys.argv:
        full = os.path.join(OUT, "full")
        os.makedirs(full, exist_ok=True)
        torch.manual_seed(4)
        export("resnet18", resnet18(), torch.randn(1, 3, 224, 224), 13, full)
        torch.manual_seed(5)
        export("mobilenetv2", mobilenet_v2(), torch.randn(1, 3, 224, 224), 15, full)


if __name__ == "__main__":
    main()
