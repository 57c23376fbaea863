// The rotor's momentum sources on the device (src/solver/rotor, src/solver/incompressible/
// rotor_source.rs `RotorSource::update`): each step, the velocity at the disk's points from the
// sampling tables, each point's blade-element (or uniform) load, the loads spread onto every
// velocity component's faces as accelerations through the spreading tables, and the disk's
// totals. The tables are the CPU's, built once on the host; the loads are evaluated in double
// for either precision, as on the CPU, with --fmad=false, so they match the CPU's up to the math
// library's atan2, sin and cos. Each spreading row is summed by a warp in a fixed tree (the CPU
// sums it in order), and the totals by one block in a tree, in double: both differ from the
// CPU's by round-off and are the same from run to run.
//
// On a grid cut into slabs over several GPUs (rotor_source.rs `PointOwners`), each part evaluates
// the points in its own layers: it packs those points' force and shares (`pack_evaluations`), the
// parts' packs are gathered in part order over NCCL, and every part puts them back in point order
// (`unpack_evaluations`) before spreading and totalling, so each part spreads the whole disk's
// forces and sums the same shares in the same order as one GPU.
//
// Disk point k's geometry is geometry[5 k ..]: radius r, area, and the unit vector e_psi of the
// direction of rotation there. Lengths, speeds and forces in the case's units; angles in radians.
#include "common.cuh"

// The math library's atan2, sin and cos, outside the kernels' own arithmetic (their
// implementations use fused multiply-adds for accuracy; common.cuh `libm_pow_f64`).
extern "C" __device__ __noinline__ double libm_atan2_f64(double y, double x) { return atan2(y, x); }
extern "C" __device__ __noinline__ double libm_sin_f64(double x) { return sin(x); }
extern "C" __device__ __noinline__ double libm_cos_f64(double x) { return cos(x); }

// The rotor (src/solver/rotor: `Rotor`, `Blades`, `Airfoil`): axis n, density, and either a
// uniform disk's thrust per unit area (blades = 0) or the blades' count, speed, chord at the root
// cut-out and the tip, collective pitch at 3/4 radius, linear twist, lift slope, zero-lift angle
// and drag polar.
struct Rotor {
    double n[3];
    double rho, per_area;
    int blades;
    double omega, root, radius, chord_root, chord_tip, collective, twist;
    double lift_slope, zero_lift, cd0, cd1, cd2;
};

#define ROTOR_PARAMS                                                                                            \
    double nx, double ny, double nz, double rho, double per_area, int blades, double omega, double root,         \
        double radius, double chord_root, double chord_tip, double collective, double twist, double lift_slope, \
        double zero_lift, double cd0, double cd1, double cd2
#define ROTOR                                                                                                   \
    Rotor {                                                                                                     \
        {nx, ny, nz}, rho, per_area, blades, omega, root, radius, chord_root, chord_tip, collective, twist,     \
            lift_slope, zero_lift, cd0, cd1, cd2                                                                \
    }

// The force of point k on the fluid (rotor/mod.rs `Rotor::point_load`, operation by operation)
// into force[3 k ..] and its shares of the totals [thrust, torque, inflow area, work] into
// shares[4 k ..], from the velocity v there.
__device__ void point_load(const Rotor& R, const double* g, const double v[3], double* force, double* shares) {
    const double r = g[0], area = g[1];
    const double e[3] = {g[2], g[3], g[4]};
    const double u_p = -(v[0] * R.n[0] + v[1] * R.n[1] + v[2] * R.n[2]);
    double thrust, in_plane;
    if (R.blades == 0) {
        thrust = R.per_area;
        in_plane = 0.0;
    } else {
        // blade_element.rs `Blades::section`.
        const double u_t = R.omega * r - (v[0] * e[0] + v[1] * e[1] + v[2] * e[2]);
        const double s = fmin(fmax((r - R.root) / (R.radius - R.root), 0.0), 1.0);
        const double chord = R.chord_root + s * (R.chord_tip - R.chord_root);
        const double pitch = R.collective + R.twist * (r / R.radius - 0.75);
        const double phi = libm_atan2_f64(u_p, u_t);
        const double alpha = pitch - phi;
        const double q = 0.5 * R.rho * (u_t * u_t + u_p * u_p) * chord;
        const double lift = q * (R.lift_slope * (alpha - R.zero_lift));
        const double drag = q * (R.cd0 + alpha * (R.cd1 + alpha * R.cd2));
        const double sp = libm_sin_f64(phi), cp = libm_cos_f64(phi);
        const double per_area = (double)R.blades / (2.0 * 3.141592653589793 * r);
        thrust = (lift * cp - drag * sp) * per_area;
        in_plane = (lift * sp + drag * cp) * per_area;
    }
    for (int a = 0; a < 3; ++a) force[a] = area * (-thrust * R.n[a] + in_plane * e[a]);
    shares[0] = thrust * area;
    shares[1] = in_plane * r * area;
    shares[2] = u_p * area;
    shares[3] = force[0] * v[0] + force[1] * v[1] + force[2] * v[2];
}

// One thread a disk point: its velocity, component c from the `corners` table entries
// index_c / weight_c of the point (rotor_source.rs `Sampling`, the third component zero in 2D),
// then its load. The rotor's parameters come last: the host binds the rest once and passes them
// at each launch (a live setting changes them).
extern "C" __global__ void disk_loads(int points, int corners, const double* __restrict__ geometry,
                                      const unsigned* __restrict__ index0, const double* __restrict__ weight0,
                                      const unsigned* __restrict__ index1, const double* __restrict__ weight1,
                                      const unsigned* __restrict__ index2, const double* __restrict__ weight2,
                                      const real* __restrict__ u0, const real* __restrict__ u1,
                                      const real* __restrict__ u2, double* __restrict__ force,
                                      double* __restrict__ shares, ROTOR_PARAMS) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= points) return;
    const unsigned* index[3] = {index0, index1, index2};
    const double* weight[3] = {weight0, weight1, weight2};
    const real* vel[3] = {u0, u1, u2};
    double v[3];
    for (int c = 0; c < 3; ++c) {
        double acc = 0.0;
        if (vel[c] != 0) {
            for (int e = k * corners; e < (k + 1) * corners; ++e) acc = acc + weight[c][e] * (double)vel[c][index[c][e]];
        }
        v[c] = acc;
    }
    const Rotor R = ROTOR;
    point_load(R, geometry + 5 * k, v, force + 3 * k, shares + 4 * k);
}

// One warp a row of component `component`'s spreading (spread.rs `Spreading::apply`): the
// acceleration at face rows[k] from the forces of the disk points that reach it. Lane l sums the
// row's entries l, l + 32, ... (neighbouring lanes read neighbouring entries), then the lanes'
// sums are added in a fixed tree, so the result is the same every step and every run; it differs
// from the CPU's sum in order by round-off. A thread a row read its own stretch of the table,
// 32 stretches a warp load: 670 us a step on Lohry's hover grid (BENCHMARKS.md).
extern "C" __global__ void spread_sources(int count, const unsigned* __restrict__ rows,
                                          const unsigned* __restrict__ start, const unsigned* __restrict__ point,
                                          const double* __restrict__ weight, const double* __restrict__ force,
                                          int component, real* __restrict__ accel) {
    const int k = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (k >= count) return;  // the same k for the whole warp
    double acc = 0.0;
    for (unsigned e = start[k] + lane; e < start[k + 1]; e += 32)
        acc = acc + weight[e] * force[3 * point[e] + component];
    acc = warp_shuffle_reduce(acc, [](double a, double b) { return a + b; });
    if (lane == 0) accel[rows[k]] = (real)acc;
}

// The disk's totals (the sums of every point's shares: thrust, torque, inflow times area, work)
// into totals[0..4], by one block of ROTOR_THREADS threads: thread t adds points t, t + T, ...,
// then a tree over the threads.
extern "C" __global__ void __launch_bounds__(ROTOR_THREADS)
    disk_totals(int points, const double* __restrict__ shares, double* __restrict__ totals) {
    __shared__ double part[4][ROTOR_THREADS];
    const int t = threadIdx.x;
    double s[4] = {0.0, 0.0, 0.0, 0.0};
    for (int k = t; k < points; k += ROTOR_THREADS)
        for (int q = 0; q < 4; ++q) s[q] = s[q] + shares[4 * k + q];
    for (int q = 0; q < 4; ++q) part[q][t] = s[q];
    __syncthreads();
    for (int half = ROTOR_THREADS / 2; half > 0; half >>= 1) {
        if (t < half)
            for (int q = 0; q < 4; ++q) part[q][t] = part[q][t] + part[q][t + half];
        __syncthreads();
    }
    if (t < 4) totals[t] = part[t][0];
}

// Values of one evaluation in the gathered layout (rotor_source.rs `EVALUATION`): a point's force
// (3) and its shares of the totals (4).
#define EVALUATION 7

// This part's evaluations into mine[EVALUATION t ..]: the force and shares of point evaluated[t]
// for t < count.
extern "C" __global__ void pack_evaluations(int count, const unsigned* __restrict__ evaluated,
                                            const double* __restrict__ force, const double* __restrict__ shares,
                                            double* __restrict__ mine) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count) return;
    const unsigned k = evaluated[t];
    double* out = mine + EVALUATION * t;
    for (int a = 0; a < 3; ++a) out[a] = force[3 * k + a];
    for (int q = 0; q < 4; ++q) out[3 + q] = shares[4 * k + q];
}

// Every part's evaluations, gathered in part order (`all`), back in point order: point k's force
// and shares from all[EVALUATION slot[k] ..].
extern "C" __global__ void unpack_evaluations(int points, const unsigned* __restrict__ slot,
                                              const double* __restrict__ all, double* __restrict__ force,
                                              double* __restrict__ shares) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= points) return;
    const double* in = all + EVALUATION * (size_t)slot[k];
    for (int a = 0; a < 3; ++a) force[3 * k + a] = in[a];
    for (int q = 0; q < 4; ++q) shares[4 * k + q] = in[3 + q];
}
