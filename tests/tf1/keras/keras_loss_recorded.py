"""What TensorFlow 2.21 with tf_keras (TF1-style graph-mode Keras) returned for the programs of
keras_loss_programs.py: {program: {name: (dtype, shape, values)}}, values flattened and
printed to 7 significant digits. Regenerate by running the programs under TensorFlow."""

# fmt: off
RECORDED = {
    "keras_losses_program": {
        "bce": ("float32", (), [
            0.8922987
        ]),
        "bce/weighted": ("float32", (), [
            0.6081649
        ]),
        "bce_logits": ("float32", (), [
            0.7715201
        ]),
        "bce_logits/weighted": ("float32", (), [
            0.642319
        ]),
        "bce_smooth": ("float32", (), [
            0.8931935
        ]),
        "bce_smooth/weighted": ("float32", (), [
            0.6220833
        ]),
        "categorical_hinge": ("float32", (), [
            1.93884
        ]),
        "categorical_hinge/weighted": ("float32", (), [
            2.364269
        ]),
        "cce": ("float32", (), [
            0.7550929
        ]),
        "cce/weighted": ("float32", (), [
            0.3522196
        ]),
        "cce_logits": ("float32", (), [
            0.7550929
        ]),
        "cce_logits/weighted": ("float32", (), [
            0.3522196
        ]),
        "cce_smooth": ("float32", (), [
            0.8702345
        ]),
        "cce_smooth/weighted": ("float32", (), [
            0.5335628
        ]),
        "cosine": ("float32", (), [
            -0.3969933
        ]),
        "cosine/weighted": ("float32", (), [
            -0.5386643
        ]),
        "cosine_axis0": ("float32", (), [
            -0.4250991
        ]),
        "fn_categorical_hinge": ("float32", (4,), [
            0.2107643, 0, 0, 0.1351011
        ]),
        "fn_cosine_similarity": ("float32", (4,), [
            -0.9584746, -0.916569, -0.693104, -0.7889095
        ]),
        "fn_hinge": ("float32", (4,), [
            0.7058191, 0.1571893, 0.4300364, 0.5747856
        ]),
        "fn_kld": ("float32", (4,), [
            2.260254, 0.5317598, 0.8493708, 1.409223
        ]),
        "fn_logcosh": ("float32", (4,), [
            0.1740382, 0.3152821, 0.2900344, 0.2506563
        ]),
        "fn_mape": ("float32", (4,), [
            61.42808, 33.20243, 204.7161, 75.62022
        ]),
        "fn_msle": ("float32", (4,), [
            0.136985, 0.1300483, 0.2138058, 0.1665968
        ]),
        "fn_poisson": ("float32", (4,), [
            1.325776, 1.084124, 1.261803, 1.274478
        ]),
        "fn_squared_hinge": ("float32", (4,), [
            0.5088521, 0.04288201, 0.3109225, 0.4779444
        ]),
        "hinge": ("float32", (), [
            1.126679
        ]),
        "hinge/weighted": ("float32", (), [
            1.053167
        ]),
        "huber": ("float32", (), [
            0.6370915
        ]),
        "huber/weighted": ("float32", (), [
            0.4203213
        ]),
        "huber_delta": ("float32", (), [
            0.262886
        ]),
        "huber_delta/weighted": ("float32", (), [
            0.188262
        ]),
        "kld": ("float32", (), [
            0.5942559
        ]),
        "kld/weighted": ("float32", (), [
            0.6953382
        ]),
        "log_cosh": ("float32", (), [
            0.571854
        ]),
        "log_cosh/weighted": ("float32", (), [
            0.3746508
        ]),
        "mae": ("float32", (), [
            1.004428
        ]),
        "mae/weighted": ("float32", (), [
            0.7419033
        ]),
        "mape": ("float32", (), [
            161.3612
        ]),
        "mape/weighted": ("float32", (), [
            123.2485
        ]),
        "mse": ("float32", (), [
            1.767042
        ]),
        "mse/weighted": ("float32", (), [
            1.051158
        ]),
        "msle": ("float32", (), [
            0.161859
        ]),
        "msle/weighted": ("float32", (), [
            0.1338007
        ]),
        "poisson": ("float32", (), [
            1.236545
        ]),
        "poisson/weighted": ("float32", (), [
            1.104199
        ]),
        "reduction_none": ("float32", (4,), [
            0.1418563, 2.774175, 2.814293, 1.337845
        ]),
        "reduction_sum": ("float32", (), [
            1.681285
        ]),
        "scce": ("float32", (), [
            0.7550929
        ]),
        "scce/weighted": ("float32", (), [
            0.3522196
        ]),
        "scce_logits": ("float32", (), [
            0.7550929
        ]),
        "scce_logits/weighted": ("float32", (), [
            0.3522196
        ]),
        "squared_hinge": ("float32", (), [
            2.005375
        ]),
        "squared_hinge/weighted": ("float32", (), [
            1.982139
        ]),
    },
}
