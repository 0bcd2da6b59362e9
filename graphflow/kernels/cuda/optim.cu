// graphflow CUDA kernels: fused optimizer updates (ApplyGradientDescent, ApplyMomentum, ApplyAdam,
// ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad, ApplyAdadelta). One launch reads the variable, its slots and the gradient
// and writes the new variable and slots into fresh buffers (the session commits them only when the
// run succeeds). Scalar hyper-parameters are read from device memory (they may be variables, like
// Adam's beta powers), so an update needs no host round trip. The arithmetic follows the CPU
// kernels term by term.
#include "common.cuh"

__device__ __forceinline__ float gf_sqrt_(float x) { return sqrtf(x); }
__device__ __forceinline__ double gf_sqrt_(double x) { return sqrt(x); }

template <typename T>
__device__ void gf_sgd_impl(long long n, const T *var, const T *alpha_p, const T *delta, T *var_out) {
    const T alpha = alpha_p[0];
    for (long long i = gf_global_id(); i < n; i += gf_global_stride()) var_out[i] = var[i] - delta[i] * alpha;
}

template <typename T>
__device__ void gf_momentum_impl(long long n, const T *var, const T *accum, const T *lr_p, const T *grad,
                                 const T *momentum_p, T *var_out, T *accum_out, long long nesterov) {
    const T lr = lr_p[0], momentum = momentum_p[0];
    for (long long i = gf_global_id(); i < n; i += gf_global_stride()) {
        const T a = accum[i] * momentum + grad[i];
        const T step = nesterov ? grad[i] * lr + a * momentum * lr : a * lr;
        accum_out[i] = a;
        var_out[i] = var[i] - step;
    }
}

template <typename T>
__device__ void gf_adam_impl(long long n, const T *var, const T *m, const T *v, const T *beta1_power_p,
                             const T *beta2_power_p, const T *lr_p, const T *beta1_p, const T *beta2_p,
                             const T *epsilon_p, const T *grad, T *var_out, T *m_out, T *v_out,
                             long long nesterov) {
    const T beta1 = beta1_p[0], beta2 = beta2_p[0], epsilon = epsilon_p[0];
    const T alpha = lr_p[0] * gf_sqrt_(T(1) - beta2_power_p[0]) / (T(1) - beta1_power_p[0]);
    for (long long i = gf_global_id(); i < n; i += gf_global_stride()) {
        const T g = grad[i];
        const T mi = m[i], vi = v[i];
        const T m_new = (g - mi) * (T(1) - beta1) + mi;
        const T v_new = (g * g - vi) * (T(1) - beta2) + vi;
        const T denom = gf_sqrt_(v_new) + epsilon;
        const T step = nesterov ? (g * (T(1) - beta1) + beta1 * m_new) * alpha : m_new * alpha;
        m_out[i] = m_new;
        v_out[i] = v_new;
        var_out[i] = var[i] - step / denom;
    }
}

template <typename T, bool CENTERED>
__device__ void gf_rms_prop_impl(long long n, const T *var, const T *mg, const T *ms, const T *mom,
                                 const T *lr_p, const T *rho_p, const T *momentum_p, const T *epsilon_p,
                                 const T *grad, T *var_out, T *mg_out, T *ms_out, T *mom_out) {
    const T lr = lr_p[0], rho = rho_p[0], momentum = momentum_p[0], epsilon = epsilon_p[0];
    for (long long i = gf_global_id(); i < n; i += gf_global_stride()) {
        const T g = grad[i];
        const T ms_new = (g * g - ms[i]) * (T(1) - rho) + ms[i];
        T denom;
        if (CENTERED) {
            const T mg_new = (g - mg[i]) * (T(1) - rho) + mg[i];
            mg_out[i] = mg_new;
            denom = ms_new - mg_new * mg_new + epsilon;
        } else {
            denom = ms_new + epsilon;
        }
        denom = gf_sqrt_(denom);
        const T mom_new = g * lr / denom + mom[i] * momentum;
        ms_out[i] = ms_new;
        mom_out[i] = mom_new;
        var_out[i] = var[i] - mom_new;
    }
}

template <typename T>
__device__ void gf_adagrad_impl(long long n, const T *var, const T *accum, const T *lr_p, const T *grad,
                                T *var_out, T *accum_out) {
    const T lr = lr_p[0];
    for (long long i = gf_global_id(); i < n; i += gf_global_stride()) {
        const T g = grad[i];
        const T a = g * g + accum[i];
        accum_out[i] = a;
        var_out[i] = var[i] - g * lr * (T(1) / gf_sqrt_(a));
    }
}

template <typename T>
__device__ void gf_adadelta_impl(long long n, const T *var, const T *accum, const T *accum_update,
                                 const T *lr_p, const T *rho_p, const T *epsilon_p, const T *grad,
                                 T *var_out, T *accum_out, T *accum_update_out) {
    const T lr = lr_p[0], rho = rho_p[0], epsilon = epsilon_p[0];
    for (long long i = gf_global_id(); i < n; i += gf_global_stride()) {
        const T g = grad[i];
        const T a = accum[i] * rho + g * g * (T(1) - rho);
        const T u = gf_sqrt_(accum_update[i] + epsilon) * (T(1) / gf_sqrt_(a + epsilon)) * g;
        accum_out[i] = a;
        var_out[i] = var[i] - u * lr;
        accum_update_out[i] = accum_update[i] * rho + u * u * (T(1) - rho);
    }
}

#define GF_OPTIM(TNAME, T)                                                                        \
    extern "C" __global__ void gf_apply_sgd_##TNAME(long long n, const T *var, const T *alpha,     \
                                                    const T *delta, T *var_out) {                 \
        gf_sgd_impl(n, var, alpha, delta, var_out);                                               \
    }                                                                                             \
    extern "C" __global__ void gf_apply_momentum_##TNAME(long long n, const T *var, const T *accum, \
                                                         const T *lr, const T *grad,              \
                                                         const T *momentum, T *var_out,           \
                                                         T *accum_out, long long nesterov) {      \
        gf_momentum_impl(n, var, accum, lr, grad, momentum, var_out, accum_out, nesterov);        \
    }                                                                                             \
    extern "C" __global__ void gf_apply_adam_##TNAME(                                             \
        long long n, const T *var, const T *m, const T *v, const T *beta1_power,                   \
        const T *beta2_power, const T *lr, const T *beta1, const T *beta2, const T *epsilon,       \
        const T *grad, T *var_out, T *m_out, T *v_out, long long nesterov) {                      \
        gf_adam_impl(n, var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,      \
                     var_out, m_out, v_out, nesterov);                                            \
    }                                                                                             \
    extern "C" __global__ void gf_apply_rms_prop_##TNAME(                                         \
        long long n, const T *var, const T *ms, const T *mom, const T *lr, const T *rho,           \
        const T *momentum, const T *epsilon, const T *grad, T *var_out, T *ms_out, T *mom_out) {   \
        gf_rms_prop_impl<T, false>(n, var, nullptr, ms, mom, lr, rho, momentum, epsilon, grad,     \
                                   var_out, nullptr, ms_out, mom_out);                            \
    }                                                                                             \
    extern "C" __global__ void gf_apply_centered_rms_prop_##TNAME(                                \
        long long n, const T *var, const T *mg, const T *ms, const T *mom, const T *lr,            \
        const T *rho, const T *momentum, const T *epsilon, const T *grad, T *var_out, T *mg_out,   \
        T *ms_out, T *mom_out) {                                                                  \
        gf_rms_prop_impl<T, true>(n, var, mg, ms, mom, lr, rho, momentum, epsilon, grad, var_out,  \
                                  mg_out, ms_out, mom_out);                                       \
    }                                                                                             \
    extern "C" __global__ void gf_apply_adagrad_##TNAME(long long n, const T *var, const T *accum, \
                                                        const T *lr, const T *grad, T *var_out,   \
                                                        T *accum_out) {                           \
        gf_adagrad_impl(n, var, accum, lr, grad, var_out, accum_out);                             \
    }                                                                                             \
    extern "C" __global__ void gf_apply_adadelta_##TNAME(                                         \
        long long n, const T *var, const T *accum, const T *accum_update, const T *lr,             \
        const T *rho, const T *epsilon, const T *grad, T *var_out, T *accum_out,                   \
        T *accum_update_out) {                                                                    \
        gf_adadelta_impl(n, var, accum, accum_update, lr, rho, epsilon, grad, var_out, accum_out,  \
                         accum_update_out);                                                       \
    }
GF_OPTIM(f32, float)
GF_OPTIM(f64, double)
