"""The mathematics of sketched kernel models.

Sketch matrices ``R = S_mix S_sub`` and their products with kernel blocks, sketched feature maps, output bases
and output matrices, dense linear algebra with rank tolerance, feature scaling.
"""
