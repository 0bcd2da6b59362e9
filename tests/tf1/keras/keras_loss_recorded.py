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
    "keras_metrics_program": {
        "accuracy/one": ("float32", (), [
            0.1666667
        ]),
        "accuracy/reset": ("float32", (), [
            0.3333333
        ]),
        "accuracy/two": ("float32", (), [
            0.4444444
        ]),
        "auc/one": ("float32", (), [
            0.8819444
        ]),
        "auc/reset": ("float32", (), [
            0.65
        ]),
        "auc/two": ("float32", (), [
            0.7073171
        ]),
        "auc_50/one": ("float32", (), [
            0.875
        ]),
        "auc_50/reset": ("float32", (), [
            0.6375
        ]),
        "auc_50/two": ("float32", (), [
            0.6939024
        ]),
        "auc_majoring/one": ("float32", (), [
            0.9027778
        ]),
        "auc_majoring/reset": ("float32", (), [
            0.65
        ]),
        "auc_majoring/two": ("float32", (), [
            0.7182927
        ]),
        "auc_pr/one": ("float32", (), [
            0.7290335
        ]),
        "auc_pr/reset": ("float32", (), [
            0.7454071
        ]),
        "auc_pr/two": ("float32", (), [
            0.7128136
        ]),
        "auc_pr_minoring/one": ("float32", (), [
            0.5069444
        ]),
        "auc_pr_minoring/reset": ("float32", (), [
            0.6263131
        ]),
        "auc_pr_minoring/two": ("float32", (), [
            0.6121024
        ]),
        "binary_accuracy/one": ("float32", (), [
            0.7222222
        ]),
        "binary_accuracy/reset": ("float32", (), [
            0.5555556
        ]),
        "binary_accuracy/two": ("float32", (), [
            0.6049383
        ]),
        "categorical_accuracy/one": ("float32", (), [
            0.1666667
        ]),
        "categorical_accuracy/reset": ("float32", (), [
            0.3333333
        ]),
        "categorical_accuracy/two": ("float32", (), [
            0.4444444
        ]),
        "evaluate": ("float32", (4,), [
            0.3253211, 0.9725275, 0.8571429, 0.9
        ]),
        "fit/auc": ("float64", (3,), [
            0.8784029, 0.9736843, 0.9818512
        ]),
        "fit/bin_acc": ("float64", (3,), [
            0.7708333, 0.9166667, 0.9375
        ]),
        "fit/loss": ("float64", (3,), [
            0.5522707, 0.4164695, 0.3441954
        ]),
        "fit/precision": ("float64", (3,), [
            0.7, 0.8947368, 0.9444444
        ]),
        "mae/one": ("float32", (), [
            0.3323753
        ]),
        "mae/reset": ("float32", (), [
            0.4318743
        ]),
        "mae/two": ("float32", (), [
            0.4116061
        ]),
        "mean/one": ("float32", (), [
            -0.1002038
        ]),
        "mean/reset": ("float32", (), [
            0.1620056
        ]),
        "mean/two": ("float32", (), [
            0.002199138
        ]),
        "mse/one": ("float32", (), [
            0.1545161
        ]),
        "mse/reset": ("float32", (), [
            0.232959
        ]),
        "mse/two": ("float32", (), [
            0.2139631
        ]),
        "precision/one": ("float32", (), [
            0.5454546
        ]),
        "precision/reset": ("float32", (), [
            0.625
        ]),
        "precision/two": ("float32", (), [
            0.6363636
        ]),
        "precision_class/one": ("float32", (), [
            0.5
        ]),
        "precision_class/reset": ("float32", (), [
            0.5
        ]),
        "precision_class/two": ("float32", (), [
            0.6
        ]),
        "precision_thresholds/one": ("float32", (3,), [
            0.4615385, 0.5454546, 0
        ]),
        "precision_thresholds/reset": ("float32", (3,), [
            0.625, 0.625, 1
        ]),
        "precision_thresholds/two": ("float32", (3,), [
            0.6212121, 0.6363636, 0
        ]),
        "recall/one": ("float32", (), [
            1
        ]),
        "recall/reset": ("float32", (), [
            0.5
        ]),
        "recall/two": ("float32", (), [
            0.5121951
        ]),
        "recall_thresholds/one": ("float32", (2,), [
            1, 0.3333333
        ]),
        "recall_thresholds/reset": ("float32", (2,), [
            0.9, 0.3
        ]),
        "recall_thresholds/two": ("float32", (2,), [
            0.8536586, 0.1707317
        ]),
        "sparse_categorical_accuracy/one": ("float32", (), [
            0.1666667
        ]),
        "sparse_categorical_accuracy/reset": ("float32", (), [
            0.3333333
        ]),
        "sparse_categorical_accuracy/two": ("float32", (), [
            0.4444444
        ]),
        "sparse_top_k/one": ("float32", (), [
            0.3333333
        ]),
        "sparse_top_k/reset": ("float32", (), [
            0.5
        ]),
        "sparse_top_k/two": ("float32", (), [
            0.5925926
        ]),
        "top_k/one": ("float32", (), [
            0.3333333
        ]),
        "top_k/reset": ("float32", (), [
            0.5
        ]),
        "top_k/two": ("float32", (), [
            0.5925926
        ]),
    },
}
