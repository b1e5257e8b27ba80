func.func @reduce(%x: tensor<3x64x4096xf32>, %all: tensor<3xi1>, %max: tensor<3xf32>, %count: tensor<3xi64>) -> (tensor<3xi1>, tensor<3xf32>, tensor<3xi64>) {
  %r:3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<3x64x4096xf32>) outs(%all, %max, %count : tensor<3xi1>, tensor<3xf32>, tensor<3xi64>) {
  ^bb0(%a: f32, %ok: i1, %m: f32, %n: i64):
    %inf = arith.constant 0x7F800000 : f32
    %zero = arith.constant 0.0 : f32
    %abs = math.absf %a : f32
    %finite = arith.cmpf olt, %abs, %inf : f32
    %nonzero = arith.cmpf one, %a, %zero : f32
    %one = arith.extui %nonzero : i1 to i64
    %ok2 = arith.andi %ok, %finite : i1
    %m2 = arith.maximumf %m, %abs : f32
    %n2 = arith.addi %n, %one : i64
    linalg.yield %ok2, %m2, %n2 : i1, f32, i64
  } -> (tensor<3xi1>, tensor<3xf32>, tensor<3xi64>)
  return %r#0, %r#1, %r#2 : tensor<3xi1>, tensor<3xf32>, tensor<3xi64>
}
