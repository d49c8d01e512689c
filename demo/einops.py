"""The demo class of ``einops``: the standard students with one plausible wrong answer per exercise."""
from graders.course.personas import standard_class

WRONG = {
    # sums over j before multiplying by y: a product of sums instead of a sum of products
    "batched_bilinear": "def batched_bilinear(x, W, y):\n"
                        "    return torch.einsum('bi,oij->bo', x, W) * y.sum(1, keepdim=True)\n",
    # channels outermost inside the token: same shape, other order
    "patchify": "def patchify(images, p):\n"
                "    return rearrange(images, 'b c (h p1) (w p2) -> b (h w) (c p1 p2)', p1=p, p2=p)\n",
    # pixel_unshuffle orders the new channels (c h0 w0)
    "space_to_depth": "def space_to_depth(x, r):\n    return torch.nn.functional.pixel_unshuffle(x, r)\n",
    # the inverse shuffle
    "channel_shuffle": "def channel_shuffle(x, groups):\n"
                       "    return rearrange(x, 'b (c g) h w -> b (g c) h w', g=groups)\n",
    # groups four consecutive pixels of a row instead of a 2x2 block
    "max_pool_2x2": "def max_pool_2x2(x):\n    B, C, H, W = x.shape\n"
                    "    return x.reshape(B, C, H // 2, W // 2, 4).amax(-1)\n",
}


def roster(assignment):
    return standard_class(assignment, WRONG)
